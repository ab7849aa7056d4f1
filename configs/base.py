"""Every configuration key, with its default: the schema the other configs start from.

The returned ConfigDict is locked, so a misspelt key in a config file or on the command line
(``--config.model.num_layrs=4``) is an error naming the key, never a silently ignored setting.
``training.config.validate`` checks the values.
"""

import ml_collections

from decoding.options import SearchOptions


def get_config() -> ml_collections.ConfigDict:
    config = ml_collections.ConfigDict()

    config.data = ml_collections.ConfigDict()
    config.data.name = "multi30k/de-en"  # a TFDS name; see data_pipeline.load_translation_splits
    config.data.data_dir = ""  # TFDS data directory ("" = TFDS default, ~/tensorflow_datasets)
    config.data.train_split = "train"
    config.data.validation_split = "validation"
    config.data.test_split = "test2016"
    config.data.max_length = 128  # longest kept example in tokens (incl. BOS/EOS); longer: counted
    config.data.tokens_per_batch = 4096  # batch * padded length <= this, source and target
    config.data.shuffle_seed = 0
    # More training pairs: comma-separated data set names (same forms as data.name) whose
    # data.train_split joins the training pairs, e.g. "multi30k/fr-de" beside "multi30k/en-de"
    # (many-to-one: the target language stays, so no tags are needed); "": none.
    config.data.extra_train_data = ""

    config.tokenizer = ml_collections.ConfigDict()
    config.tokenizer.vocab_size = 8000  # joint source+target SentencePiece vocabulary
    config.tokenizer.model_type = "unigram"  # or "bpe"
    # Subword regularisation: > 0 samples a new segmentation of every training sentence on every
    # epoch, with this alpha (unigram only; see data_pipeline/tokenizer.py); 0: the best one.
    config.tokenizer.sampling_alpha = 0.0

    config.model = ml_collections.ConfigDict()
    config.model.num_layers = 3  # encoder layers
    config.model.num_decoder_layers = 3
    config.model.d_model = 256
    config.model.num_heads = 4
    config.model.d_ff = 1024
    config.model.dropout = 0.1  # on the embeddings and each sublayer's output
    # Dropout on the attention weights and on the feed-forward hidden activations; None: the
    # model.dropout rate. fairseq's transformer configs set both to 0.
    config.model.attention_dropout = ml_collections.config_dict.placeholder(float)
    config.model.activation_dropout = ml_collections.config_dict.placeholder(float)
    config.model.shared_embeddings = "all"  # "all" | "target" | "none"
    config.model.norm_first = False  # post-norm as in the paper

    config.train = ml_collections.ConfigDict()
    config.train.steps = 10000
    config.train.warmup_steps = 1000
    config.train.peak_learning_rate = 0.0  # 0: the paper's d_model^-0.5 * warmup_steps^-0.5
    config.train.decay = "inverse_sqrt"  # after warm-up: "inverse_sqrt" (paper) | "cosine" (to 0)
    config.train.adam_beta1 = 0.9
    config.train.adam_beta2 = 0.98
    config.train.adam_epsilon = 1e-9
    config.train.label_smoothing = 0.1
    config.train.gradient_clip_norm = 0.0  # 0: no clipping
    # Decoupled weight decay (AdamW, Loshchilov & Hutter): each step multiplies the weight matrices
    # and embeddings by (1 - learning_rate * weight_decay); biases and layer norms are not decayed.
    config.train.weight_decay = 0.0  # 0: plain Adam
    config.train.seed = 0
    config.train.precision = "float32"  # "float32" | "mixed_bfloat16" | "mixed_float16"
    config.train.jit_compile = False
    config.train.distribution = "default"  # "default" | "mirrored" | "multi_worker" | "tpu"
    config.train.tpu_address = ""
    config.train.log_every = 50
    config.train.checkpoint_every = 500
    config.train.keep_checkpoints = 3
    config.train.eval_every = 1000
    config.train.eval_max_sentences = 500  # validation BLEU on the first N sentences (bounded time)

    # Search defaults come from decoding.SearchOptions, where each is defined once.
    config.decode = ml_collections.ConfigDict()
    config.decode.beam_size = SearchOptions.beam_size
    config.decode.length_penalty = SearchOptions.length_penalty  # GNMT alpha
    # The search compiled by XLA (translate.py, evaluate.py, the SavedModel; not validation during
    # training): one compilation per padded input shape (seconds), then much less time per call
    # (benchmarks/saved_model_latency.py: faster for a single sentence; see docs/PERFORMANCE.md).
    config.decode.jit_compile = True
    # Output length <= ratio * source length + offset.
    config.decode.max_length_ratio = SearchOptions.max_length_ratio
    config.decode.max_length_offset = SearchOptions.max_length_offset

    config.lock()
    return config
