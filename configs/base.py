"""Every configuration key, with its default: the schema the other configs start from.

The returned ConfigDict is locked, so a misspelt key in a config file or on the command line
(``--config.model.num_layrs=4``) is an error naming the key, never a silently ignored setting.
``training.config.validate`` checks the values.
"""

import ml_collections

from decoding.options import SearchOptions


def get_config() -> ml_collections.ConfigDict:
    config = ml_collections.ConfigDict()
    # "translation" (a Transformer) | "classification" (its encoder as a text classifier,
    # transformer/classifier.py: data.name is labelled text, config.classifier applies).
    config.task = "translation"

    config.data = ml_collections.ConfigDict()
    config.data.name = (
        "multi30k/de-en"  # a TFDS set, own files or several directions: data_pipeline/spec.py
    )
    # TFDS data directory ("" = TFDS default, ~/tensorflow_datasets); a text corpus's training
    # split is prepared there too, once (prepared_text/: shuffled shards, data_pipeline.prepared).
    config.data.data_dir = ""
    config.data.train_split = "train"  # the split the model and the tokenizer train on
    # Scored during training and by export.py (choosing the CTranslate2 length penalty).
    config.data.validation_split = "validation"
    config.data.test_split = "test2016"  # the split evaluate.py scores by default
    # Longest kept example in tokens (incl. BOS/EOS); longer: counted and dropped. A classifier
    # reads a text's first max_length tokens (BOS included) and drops none.
    config.data.max_length = 128
    config.data.tokens_per_batch = 4096  # batch * padded length <= this, source and target
    config.data.shuffle_seed = 0  # seed of the training examples' shuffle (their order)
    # Training pairs shuffled together (strings, ~150 bytes each): bounds the memory the shuffle
    # takes and the data position saved with each checkpoint. A larger set is shuffled in blocks
    # of 16 pairs, its shards in a new order every epoch (data_pipeline.batching, .prepared).
    # Multi30k's 29,000 pairs fit whole, pair by pair.
    config.data.shuffle_buffer = 30_000
    # More training pairs: comma-separated data set names (same forms as data.name) whose
    # data.train_split joins the training pairs, e.g. "multi30k/fr-de" beside "multi30k/en-de"
    # (many-to-one: the target language stays, so no tags are needed); "": none.
    config.data.extra_train_data = ""

    config.tokenizer = ml_collections.ConfigDict()
    config.tokenizer.vocab_size = 8000  # joint source+target SentencePiece vocabulary
    config.tokenizer.model_type = "unigram"  # SentencePiece's algorithm: "unigram" | "bpe"
    # Sentences SentencePiece trains on: both sides of the first half as many training pairs,
    # a random sample (the pairs come shuffled); 0: every sentence.
    config.tokenizer.input_sentence_size = 1_000_000
    # Subword regularisation: > 0 samples a new segmentation of every training sentence on every
    # epoch, with this alpha (unigram only; see data_pipeline/tokenizer.py); 0: the best one.
    config.tokenizer.sampling_alpha = 0.0

    config.model = ml_collections.ConfigDict()
    config.model.num_layers = 3  # encoder layers
    config.model.num_decoder_layers = 3  # decoder layers
    config.model.d_model = 256  # width of the embeddings and of every sublayer's output
    config.model.num_heads = 4  # attention heads, each d_model // num_heads wide
    config.model.d_ff = 1024  # inner width of the feed-forward sublayers
    config.model.dropout = 0.1  # on the embeddings and each sublayer's output
    # Dropout on the attention weights and on the feed-forward hidden activations; None: the
    # model.dropout rate. fairseq's transformer configs set both to 0.
    config.model.attention_dropout = ml_collections.config_dict.placeholder(float)
    config.model.activation_dropout = ml_collections.config_dict.placeholder(float)
    # Tied matrices: "all" (source and target embeddings and the output projection; needs the
    # joint vocabulary) | "target" (target embedding and output projection) | "none".
    config.model.shared_embeddings = "all"
    config.model.norm_first = False  # post-norm as in the paper

    config.train = ml_collections.ConfigDict()
    config.train.steps = 10000  # optimizer steps in all; training stops there
    config.train.warmup_steps = 1000  # steps of linear learning-rate warm-up to the peak
    config.train.peak_learning_rate = 0.0  # 0: the paper's d_model^-0.5 * warmup_steps^-0.5
    config.train.decay = "inverse_sqrt"  # after warm-up: "inverse_sqrt" (paper) | "cosine" (to 0)
    # Adam's beta_1, beta_2 and epsilon.
    config.train.adam_beta1 = 0.9
    config.train.adam_beta2 = 0.98
    config.train.adam_epsilon = 1e-9
    config.train.label_smoothing = 0.1  # target mass spread over the vocabulary (training loss)
    config.train.gradient_clip_norm = 0.0  # 0: no clipping
    # Decoupled weight decay (AdamW, Loshchilov & Hutter): each step multiplies the weight matrices
    # and embeddings by (1 - learning_rate * weight_decay); biases and layer norms are not decayed.
    config.train.weight_decay = 0.0  # 0: plain Adam
    # Seeds Python, NumPy and TensorFlow (initialisation, dropout) and the tokenizer's training.
    config.train.seed = 0
    config.train.precision = "float32"  # "float32" | "mixed_bfloat16" | "mixed_float16"
    config.train.jit_compile = False  # compile the training step with XLA
    # Compile the loss alone with XLA (training/loss.py): faster steps after one compilation per
    # batch shape; off for runs of a few dozen steps, which meet a new shape at most steps.
    config.train.jit_compile_loss = True
    config.train.distribution = "default"  # "default" | "mirrored" | "multi_worker" | "tpu"
    # The TPU train.distribution "tpu" connects to (TPUClusterResolver's tpu): a Cloud TPU name,
    # "grpc://host:port" or "local" (a TPU VM's own TPUs); "": from the environment (TPU_NAME).
    config.train.tpu_address = ""
    # Each *_every also acts at the last step.
    config.train.log_every = 50  # steps between logs: loss, accuracy, learning rate, speed
    config.train.checkpoint_every = 500  # steps between checkpoints (with the data position)
    config.train.keep_checkpoints = 3  # newest checkpoints kept (the best one is kept apart)
    config.train.eval_every = 1000  # steps between validations (loss, greedy BLEU; best/); 0: none
    config.train.eval_max_sentences = 500  # validation BLEU on the first N sentences (bounded time)
    # Early stopping: end the run after this many validations in a row without a validation BLEU
    # more than early_stopping_min_delta above the last that was (best/ keeps the best); 0: off.
    config.train.early_stopping_patience = 0
    config.train.early_stopping_min_delta = 0.0
    # Fine-tuning: start from another run's weights and tokenizer, "WORKDIR[:best|latest|averaged]"
    # (its best by default; the optimizer, schedule and data start afresh); "": random weights.
    config.train.init_from = ""
    # With init_from: also start from that run's Adam moments (init_from=WORKDIR:latest, the same
    # train.freeze and precision); the step and the schedule still start afresh.
    config.train.keep_optimizer = False
    # Parts kept fixed while training, comma-separated: encoder, decoder, embeddings; "": none.
    config.train.freeze = ""

    # A classifier's (config.task = "classification"; data.name: data_pipeline/labelled_text.py).
    config.classifier = ml_collections.ConfigDict()
    config.classifier.pooling = "mean"  # one vector a text: "mean" (masked) | "first" (BOS)
    # The label whose F1 chooses the best checkpoint and evaluate.py reports first (spam); "":
    # the macro F1 over the labels.
    config.classifier.positive_label = ""
    # Seeds the split of the data into train/validation/test (80/10/10 within each label),
    # made once and recorded in the work directory (rundir/labelled.py).
    config.classifier.split_seed = 0

    # Search defaults come from decoding.SearchOptions, where each is defined once.
    config.decode = ml_collections.ConfigDict()
    config.decode.beam_size = SearchOptions.beam_size  # hypotheses kept per sentence; 1: greedy
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
