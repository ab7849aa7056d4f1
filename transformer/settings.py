"""The model's settings as one value: `TransformerConfig`, checked once when it is made.

The model and its layers take it (as Flax's ``TransformerConfig``); a config file's
``config.model`` holds the same keys, the vocabulary sizes and the padding id aside, and
``training.config`` checks them by making one. A bad value is a `SettingError` naming the
setting and what it must be.

Example:
    >>> config = TransformerConfig(source_vocab_size=8000, num_layers=2, d_model=128,
    ...                            num_heads=4, d_ff=512)
    >>> config.num_decoder_layers, config.target_vocab_size, config.attention_dropout
    (2, 8000, 0.1)
"""

from __future__ import annotations

import dataclasses

LAYER_NORM_EPSILON = 1e-6  # every layer norm's: added to the variance
SHARED_EMBEDDINGS = ("all", "target", "none")


class SettingError(ValueError):
    """A setting is invalid: ``"<setting> must be <must>, got <value>."``; ``training.config``
    words it for the config file's key."""

    def __init__(self, setting: str, value: object, must: str) -> None:
        super().__init__(f"{setting} must be {must}, got {value!r}.")
        self.setting, self.value, self.must = setting, value, must


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    """The hyper-parameters of a :class:`transformer.model.Transformer`.

    Args:
        source_vocab_size: source vocabulary size.
        target_vocab_size: target vocabulary size; None: ``source_vocab_size``.
        num_layers: encoder layers (N in the paper), and decoder layers unless
            ``num_decoder_layers`` is given.
        num_decoder_layers: decoder layers; None: ``num_layers``. A deeper encoder with a
            shallower decoder (Kasai et al., 2021) decodes faster, since the encoder runs once per
            sentence and the decoder once per output token (on Multi30k, 4+2 against 3+3: 1.2-1.4x
            faster, 0.55 validation BLEU lower; see docs/RESULTS.md).
        d_model: model width.
        num_heads: attention heads; each has depth ``d_model // num_heads``.
        d_ff: inner width of the feed-forward sublayers.
        dropout: dropout rate on the embeddings and each sublayer's output (before the residual
            sum), and the default of the next two.
        attention_dropout: rate on the attention weights; None: ``dropout``.
        activation_dropout: rate on the feed-forward hidden activations; None: ``dropout``.
            fairseq's transformer configs keep these two at 0 and ``dropout`` at 0.1-0.3.
        shared_embeddings: ``"all"`` — one matrix embeds source and target tokens and projects the
            output (needs a joint vocabulary); ``"target"`` — the target embedding is the output
            projection; ``"none"`` — three separate matrices.
        norm_first: pre-norm layers (with a final layer norm per stack) instead of post-norm.
        pad_id: the padding token id; padded source and target keys are masked out.

    The defaults left as None are filled in when it is made: the value read is never None.
    """

    source_vocab_size: int
    target_vocab_size: int | None = None
    num_layers: int = 6
    num_decoder_layers: int | None = None
    d_model: int = 512
    num_heads: int = 8
    d_ff: int = 2048
    dropout: float = 0.1
    attention_dropout: float | None = None
    activation_dropout: float | None = None
    shared_embeddings: str = "all"
    norm_first: bool = False
    pad_id: int = 0

    def __post_init__(self) -> None:
        defaults = {
            "target_vocab_size": self.source_vocab_size,
            "num_decoder_layers": self.num_layers,
            "attention_dropout": self.dropout,
            "activation_dropout": self.dropout,
        }
        for name, default in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        self._check()

    def _check(self) -> None:
        for name in (
            "source_vocab_size",
            "target_vocab_size",
            "num_layers",
            "num_decoder_layers",
            "d_model",
            "num_heads",
            "d_ff",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise SettingError(name, value, "a positive integer")
        if self.d_model % self.num_heads:
            raise SettingError(
                "d_model",
                self.d_model,
                f"divisible by num_heads ({self.num_heads}): each head has depth "
                "d_model / num_heads",
            )
        if self.d_model % 2:
            raise SettingError("d_model", self.d_model, "even (the sinusoidal position encoding)")
        check_rate("dropout", self.dropout)
        for name in ("attention_dropout", "activation_dropout"):
            check_rate(name, getattr(self, name), ", or None for dropout's")
        if self.shared_embeddings not in SHARED_EMBEDDINGS:
            raise SettingError(
                "shared_embeddings", self.shared_embeddings, f"one of {SHARED_EMBEDDINGS}"
            )
        if self.shared_embeddings == "all" and self.source_vocab_size != self.target_vocab_size:
            raise SettingError(
                "shared_embeddings",
                "all",
                f"'target' or 'none' for separate vocabularies (source_vocab_size="
                f"{self.source_vocab_size} != target_vocab_size={self.target_vocab_size}); 'all' "
                "needs one joint vocabulary",
            )


def check_rate(name: str, value: object, alternative: str = "") -> None:
    """A SettingError naming ``name`` unless ``0 <= value < 1`` (a dropout rate).

    Example:
        >>> check_rate("dropout", 1.5)
        Traceback (most recent call last):
        ...
        transformer.settings.SettingError: dropout must be a number in [0, 1), got 1.5.
    """
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value < 1.0:
        raise SettingError(name, value, "a number in [0, 1)" + alternative)
