"""A few-minute smoke run (used by the tests): a tiny model on Multi30k de-en.

1+1 layers of width 32, 60 steps: it checks that everything runs; its BLEU means nothing. Its
search and its loss run in the graph, without XLA: XLA would compile each new input shape in each
new process, which for so few steps costs more than it saves (the tests that are about XLA turn
it on).
"""

from configs import base


def get_config():
    config = base.get_config()
    config.data.name = "multi30k/de-en"
    config.data.max_length = 48
    config.data.tokens_per_batch = 1024
    config.tokenizer.vocab_size = 1000
    config.model.num_layers = 1
    config.model.num_decoder_layers = 1
    config.model.d_model = 32
    config.model.num_heads = 2
    config.model.d_ff = 64
    config.model.dropout = 0.0
    config.train.steps = 60
    config.train.warmup_steps = 20
    config.train.peak_learning_rate = 3e-3
    config.train.log_every = 10
    config.train.checkpoint_every = 20
    config.train.eval_every = 60
    config.train.eval_max_sentences = 20
    config.train.jit_compile_loss = False
    config.decode.beam_size = 1
    config.decode.jit_compile = False
    return config
