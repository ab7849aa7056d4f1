"""A build() for layers made of sublayers that each create their own variables."""

from __future__ import annotations


class SublayersBuildOnFirstCall:
    """Mixin (before ``keras.layers.Layer``) for a layer whose sublayers each build themselves
    when first called: its own build() creates nothing.

    A Keras layer without a build() of its own is built by tracing its ``call()`` symbolically
    first, and every such sublayer inside it is traced again, before the real call runs: a whole
    model's first call cost several times the call itself (docs/PERFORMANCE.md). With this
    build() the sublayers are created by the same calls in the same name scopes, so the
    variables' paths (the checkpoint keys) and their initial values are those of the traced build.

    Example:
        >>> class Block(SublayersBuildOnFirstCall, keras.layers.Layer): ...
    """

    def build(self, input_shape: tuple | None = None) -> None:
        self.built = True
