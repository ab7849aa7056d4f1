"""The tutorials' spam filter on the SpamAssassin mail corpus: the Transformer's encoder as a
text classifier (``transformer/classifier.py``).

    python train.py --config=configs/spam_assassin.py --workdir=runs/spam \
        --config.data.data_dir=../shared/data/spam_assassin

Each message is its subject and body as text (``data_pipeline/labelled_text.py``), split once
80/10/10 by label (seeded by ``classifier.split_seed``, recorded in ``split.json``); the model
reads a message's first ``data.max_length`` pieces. ``classifier.positive_label`` "spam": the
spam F1 chooses the best checkpoint. Your own ``label,text`` file:
``--config.data.name=text:FILE.csv`` (and ``--config.classifier.positive_label=`` for several
labels). The translation settings (the decoder's, ``decode.*``, ``train.label_smoothing``) are
not used.
"""

from configs import base


def get_config():
    config = base.get_config()
    config.task = "classification"
    config.data.name = "spam_assassin"
    config.data.validation_split = "validation"
    config.data.test_split = "test"
    config.data.max_length = 256
    config.data.tokens_per_batch = 8192
    config.tokenizer.vocab_size = 8000
    config.model.num_layers = 2
    config.model.d_model = 128
    config.model.num_heads = 4
    config.model.d_ff = 512
    config.model.dropout = 0.1
    config.classifier.pooling = "mean"
    config.classifier.positive_label = "spam"
    config.train.steps = 1500
    config.train.warmup_steps = 150
    config.train.peak_learning_rate = 1e-3
    config.train.log_every = 50
    config.train.checkpoint_every = 250
    config.train.eval_every = 250
    return config
