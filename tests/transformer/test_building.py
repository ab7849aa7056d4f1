import keras
import tensorflow as tf

from transformer.model import Transformer
from transformer.settings import TransformerConfig

# The variables of a 1-layer pre-norm model below its name: the keys of every checkpoint written
# so far (rundir.checkpoints.model_variables), so they must not change. The cross-attention's
# projections sit directly in decoder_0's scope: it is run through its methods, not called.
CHECKPOINT_PATHS = [
    "target_embedding/embedding/embeddings",
    "source_embedding/embedding/embeddings",
    "output_projection/kernel",
    "output_projection/bias",
    *(
        f"{layer}/{sublayer}/{variable}"
        for layer in ("encoder_0", "decoder_0")
        for sublayer, variable in [
            *(
                (f"self_attention/{w}", v)
                for w in ("W_q", "W_k", "W_v", "W_o")
                for v in ("kernel", "bias")
            ),
            *(("self_attention_norm", v) for v in ("gamma", "beta")),
            *((f"feed_forward/{d}", v) for d in ("hidden", "output") for v in ("kernel", "bias")),
            *(("feed_forward_norm", v) for v in ("gamma", "beta")),
        ]
    ),
    *(f"decoder_0/{w}/{v}" for w in ("W_q", "W_k", "W_v", "W_o") for v in ("kernel", "bias")),
    "decoder_0/cross_attention_norm/gamma",
    "decoder_0/cross_attention_norm/beta",
    "encoder_norm/gamma",
    "encoder_norm/beta",
    "decoder_norm/gamma",
    "decoder_norm/beta",
]


def small_model() -> Transformer:
    config = TransformerConfig(
        source_vocab_size=12,
        target_vocab_size=10,
        shared_embeddings="none",
        num_layers=1,
        d_model=8,
        num_heads=2,
        d_ff=16,
        norm_first=True,
    )
    return Transformer(config)


def test_the_first_call_builds_without_a_symbolic_trace(monkeypatch):
    traced = []
    real_compute_output_spec = keras.src.backend.compute_output_spec

    def compute_output_spec(fn, *args, **kwargs):
        traced.append(fn)
        return real_compute_output_spec(fn, *args, **kwargs)

    monkeypatch.setattr(keras.src.backend, "compute_output_spec", compute_output_spec)
    model = small_model()
    model((tf.fill([1, 3], 5), tf.fill([1, 2], 5)))
    assert traced == [] and model.count_params() > 0


def test_the_variables_keep_the_paths_of_every_checkpoint():
    model = small_model()
    model((tf.fill([1, 3], 5), tf.fill([1, 2], 5)))
    assert [v.path.removeprefix(model.name + "/") for v in model.weights] == CHECKPOINT_PATHS
