"""A few-minute smoke run (used by the tests): a tiny model on Multi30k de-en.

1+1 pre-norm layers of width 32, 300 steps of 2,048 tokens: it checks that everything runs, and
it learns enough that its translations depend on the source (validation loss with the true
sources ~10 % below that with another sentence's; tests/training/test_train.py). Its BLEU means
nothing beyond that. Its search and its loss run in the graph, without XLA: XLA would compile
each new input shape in each new process, which for so few steps costs more than it saves (the
tests that are about XLA turn it on).
"""

from configs import base


def get_config():
    config = base.get_config()
    config.data.name = "multi30k/de-en"
    config.data.max_length = 48
    config.data.tokens_per_batch = 2048
    config.tokenizer.vocab_size = 1000
    config.model.num_layers = 1
    config.model.num_decoder_layers = 1
    config.model.d_model = 32
    config.model.num_heads = 2
    config.model.d_ff = 64
    config.model.dropout = 0.0
    config.model.norm_first = True
    config.train.steps = 300
    config.train.warmup_steps = 30
    config.train.peak_learning_rate = 1e-2
    config.train.log_every = 50
    config.train.checkpoint_every = 100
    config.train.eval_every = 300
    config.train.eval_max_sentences = 20
    config.train.jit_compile_loss = False
    config.decode.beam_size = 1
    config.decode.jit_compile = False
    return config
