"""SentencePiece tokenizers: trained with `sentencepiece`, applied in-graph with tensorflow_text.

Special ids (`PAD_ID = 0`, `UNK_ID = 1`, `BOS_ID = 2`, `EOS_ID = 3`) come from
`common.special_tokens`, shared by training, decoding and export.

Normalisation. Models are trained with `normalization_rule_name="identity"` (no Unicode
normalisation, case and punctuation kept as written) and `byte_fallback=True` (characters not
in the vocabulary are encoded as UTF-8 bytes, never as <unk>). The one normalisation is
SentencePiece's whitespace handling: leading and trailing spaces are removed and runs of
spaces collapse to one; `normalize_text` does exactly that. So for every string `s`,
`detokenize(tokenize(s)) == normalize_text(s)`.

`Tokenizer` is a `tf.Module` wrapping `tensorflow_text.SentencepieceTokenizer` built from the
serialized model, so it works inside `tf.function` and `tf.data`, and a SavedModel that tracks
it tokenizes and detokenizes without Python.

Subword regularisation (Kudo, 2018). `tokenizer.sampling(alpha)` is a copy of a unigram
tokenizer whose `tokenize` samples one of all segmentations of each string at every call, with
probability proportional to P(segmentation)^alpha (small alpha: more varied, longer
segmentations; 0.3 splits Multi30k ~12 % finer than the best segmentation and changes ~75 % of
the sentences: benchmarks/subword_sampling.py). Training reads each sentence anew every epoch,
so the model sees many segmentations of it and leans less on any one; decoding and evaluation
use the best one. The sampling is done by SentencePiece's own random generator, which
TensorFlow's seeds do not reach.

Example:
    >>> tok = load_or_train_tokenizer("/tmp/run/spm.model", train_pairs, 8000)  # doctest: +SKIP
    >>> ids = tok.tokenize(["Ein Hund läuft."])          # RaggedTensor, no BOS/EOS
    >>> tok.detokenize(ids)                              # [b'Ein Hund l\\xc3\\xa4uft.']
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence

import sentencepiece as spm
import tensorflow as tf
import tensorflow_text as tf_text
from absl import logging
from sentencepiece import sentencepiece_model_pb2
from tensorflow_text.python.ops import sentencepiece_tokenizer as _sentencepiece_ops

from common import language_tags
from common.errors import ConfigError
from common.special_tokens import BOS_ID, EOS_ID, PAD_ID, SPECIAL_PIECES, UNK_ID

MODEL_TYPES = ("unigram", "bpe")
_SPACES = re.compile(" +")


def normalize_text(text: str) -> str:
    """The one normalisation of the round trip: strip spaces, collapse runs of spaces.

    Example:
        >>> normalize_text("  Ein  Hund . ")
        'Ein Hund .'
    """
    return _SPACES.sub(" ", text.strip(" "))


def train_sentencepiece(
    sentences: Iterable[str],
    model_prefix: str,
    vocab_size: int,
    model_type: str = "unigram",
    character_coverage: float = 1.0,
    *,
    input_sentence_size: int = 0,
    seed: int = 0,
    num_threads: int | None = None,
    user_defined_symbols: Sequence[str] = (),
) -> str:
    """Trains a SentencePiece model and returns the path of `{model_prefix}.model`.

    SentencePiece trains in memory; the model is then written to a temporary file that is moved
    into place with `os.replace`, so a `.model` file that exists is always complete, and a write
    that fails (a full disk, a read-only directory) raises the `OSError` with its errno and
    leaves nothing behind. `input_sentence_size > 0` trains on a random sample of that many
    sentences.

    Example:
        >>> path = train_sentencepiece(["Ein Hund.", "A dog."] * 100, "/tmp/spm", 300)
        ... # doctest: +SKIP
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {MODEL_TYPES}, got {model_type!r}.")
    reserved = 4 + len(user_defined_symbols) + 256
    if vocab_size < reserved + 1:
        raise ValueError(
            f"vocab_size={vocab_size} is too small: {reserved} special, user-defined and byte "
            f"pieces (byte fallback) come first; use at least {reserved + 1} (usually thousands)."
        )
    model = io.BytesIO()
    spm.set_random_generator_seed(seed)  # Sampling and shuffling of input sentences.
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=model,
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=character_coverage,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            normalization_rule_name="identity",
            byte_fallback=True,
            user_defined_symbols=list(user_defined_symbols),
            input_sentence_size=input_sentence_size,
            shuffle_input_sentence=True,
            num_threads=num_threads or os.cpu_count() or 1,
            minloglevel=2,
        )
    except RuntimeError as e:
        raise ConfigError(
            f"SentencePiece training failed for vocab_size={vocab_size}, "
            f"model_type={model_type!r}: {str(e).strip()} If the vocabulary is too large for "
            "this training text, choose a smaller vocab_size (tokenizer.vocab_size)."
        ) from None
    path = model_prefix + ".model"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    temporary = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with open(temporary, "wb") as file:
            file.write(model.getvalue())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return path


class _SharedSentencepieceModel(tf.saved_model.experimental.TrackableResource):
    """The SentencePiece model resource, shared by name so that it survives kernel-cache clears."""

    def __init__(self, model_proto: bytes):
        super().__init__()
        self._model = model_proto
        self._shared_name = "data_pipeline_spm_" + hashlib.sha256(model_proto).hexdigest()[:32]
        _ = self.resource_handle  # Creates the resource now.

    def _create_resource(self):
        return _sentencepiece_ops.gen_sentencepiece_tokenizer.sentencepiece_op(
            model=self._model, shared_name=self._shared_name
        )


class Tokenizer(tf.Module):
    """In-graph SentencePiece tokenizer with the shared special ids (trackable by SavedModel).

    Example:
        >>> tok = Tokenizer.from_file("/tmp/run/spm.model")  # doctest: +SKIP
        >>> ids = tok.tokenize(tf.constant(["A dog runs."]))    # RaggedTensor [1, None]
        >>> tok.detokenize(ids)                                  # [b'A dog runs.']
    """

    def __init__(self, model_proto: bytes, name: str = "tokenizer", *, sampling_alpha: float = 0.0):
        super().__init__(name=name)
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(model_proto)
        pieces = [p.piece for p in proto.pieces[: len(SPECIAL_PIECES)]]
        if pieces != list(SPECIAL_PIECES.values()):
            raise ValueError(
                f"SentencePiece model starts with pieces {pieces}, expected "
                f"{list(SPECIAL_PIECES.values())}: it was not trained with pad/unk/bos/eos ids "
                f"{PAD_ID}/{UNK_ID}/{BOS_ID}/{EOS_ID}."
            )
        self._vocab_size = len(proto.pieces)
        self._languages = language_tags.languages_in_pieces(p.piece for p in proto.pieces)
        piece_ids = {p.piece: i for i, p in enumerate(proto.pieces)}
        self._tag_ids = tuple(piece_ids[language_tags.tag(lang)] for lang in self._languages)
        # A piece starting with a letter or digit (no "▁") continues the word written before it.
        self._continues_word = tuple(p.piece[:1].isalnum() for p in proto.pieces)
        self._model_type = proto.trainer_spec.ModelType.Name(proto.trainer_spec.model_type).lower()
        _check_sampling_alpha(sampling_alpha, self._model_type)
        self._sampling_alpha = float(sampling_alpha)
        self.sentencepiece = tf_text.SentencepieceTokenizer(
            model=model_proto,
            out_type=tf.int32,
            # nbest_size -1 samples from all segmentations (the lattice); 0 takes the best one.
            nbest_size=-1 if sampling_alpha else 0,
            alpha=sampling_alpha or 1.0,
        )
        # tensorflow_text keeps the model in a resource owned by the op's eager kernel, and
        # `tf.random.set_seed` (also `keras.utils.set_random_seed`) clears the eager kernel cache,
        # which deletes that resource: every later call would fail with "Resource ... does not
        # exist". A resource with a shared name (one per model content) outlives its kernel.
        self.sentencepiece._model_resource = _SharedSentencepieceModel(model_proto)
        self._model_proto = model_proto

    @classmethod
    def from_file(cls, path: str) -> Tokenizer:
        """Loads a `.model` file (local or any `tf.io.gfile` path).

        Example:
            >>> tok = Tokenizer.from_file("/tmp/run/spm.model")  # doctest: +SKIP
        """
        with tf.io.gfile.GFile(path, "rb") as f:
            return cls(f.read())

    @property
    def model_proto(self) -> bytes:
        """The serialized SentencePiece model (the contents of the `.model` file).

        Example:
            >>> Tokenizer(tok.model_proto).vocab_size == tok.vocab_size  # doctest: +SKIP
            True
        """
        return self._model_proto

    @property
    def model_type(self) -> str:
        """The SentencePiece model type, e.g. "unigram" or "bpe".

        Example:
            >>> tok.model_type  # doctest: +SKIP
            'unigram'
        """
        return self._model_type

    @property
    def sampling_alpha(self) -> float:
        """0 for the best segmentation, else the alpha each segmentation is sampled with.

        Example:
            >>> tok.sampling_alpha, tok.sampling(0.3).sampling_alpha  # doctest: +SKIP
            (0.0, 0.3)
        """
        return self._sampling_alpha

    def sampling(self, alpha: float) -> Tokenizer:
        """A copy that samples a segmentation at every call (subword regularisation; see the
        module docstring). For training data only; unigram models only.

        Example:
            >>> sampler = tok.sampling(0.3)                      # doctest: +SKIP
            >>> sampler.tokenize(["Ein Hund."]).to_list()      # e.g. [[412, 9, 88, 5]]
            >>> tok.detokenize(sampler.tokenize(["Ein Hund."]))  # [b'Ein Hund.']
        """
        if not alpha:
            raise ValueError("sampling alpha must be > 0 (0 is the best segmentation: use self).")
        return Tokenizer(self._model_proto, name=f"{self.name}_sampling", sampling_alpha=alpha)

    @property
    def vocab_size(self) -> int:
        """Number of ids, special ones included (ids are 0 .. vocab_size - 1).

        Example:
            >>> tok.vocab_size  # doctest: +SKIP
            8000
        """
        return self._vocab_size

    @property
    def languages(self) -> tuple[str, ...]:
        """The target languages whose tags the vocabulary holds (`common.language_tags`),
        sorted; () for a model of one target language.

        Example:
            >>> tok.languages  # doctest: +SKIP
            ('cs', 'de', 'en', 'fr')
        """
        return self._languages

    @property
    def tag_ids(self) -> tuple[int, ...]:
        """The ids of the target-language tags, in the order of `languages`: pieces a search
        must never write.

        Example:
            >>> tok.tag_ids  # doctest: +SKIP
            (4, 5, 6, 7)
        """
        return self._tag_ids

    @property
    def continues_word(self) -> tuple[bool, ...]:
        """For each id, whether its piece continues the word before it (starts with a letter
        or digit, not with SentencePiece's word boundary "▁"): what may not follow a term.

        Example:
            >>> [tok.continues_word[i] for i in tok.tokenize(["dogs"])[0]]  # doctest: +SKIP
            [False, True]   # "▁dog", "s"
        """
        return self._continues_word

    def tokenize(self, strings) -> tf.RaggedTensor:
        """Strings -> int32 ids, without BOS/EOS; a [N] input gives a RaggedTensor [N, None].

        The best segmentation, or a sampled one for a `sampling` tokenizer.

        Example:
            >>> tok.tokenize(["Ein Hund."]).to_list()  # doctest: +SKIP
            [[412, 97, 5]]
        """
        return self.sentencepiece.tokenize(strings)

    def detokenize(self, ids) -> tf.Tensor:
        """Ids ([T] or [N, T], dense or ragged) -> strings ([] or [N]).

        PAD and BOS are ignored, and each row ends at its first EOS (which, with everything
        after it, is dropped), so decoder output can be passed as is.

        Example:
            >>> tok.detokenize([[BOS_ID, 412, 97, 5, EOS_ID, 77, PAD_ID]])  # doctest: +SKIP
            <tf.Tensor: shape=(1,), dtype=string, numpy=array([b'Ein Hund.'], dtype=object)>
        """
        if isinstance(ids, tf.RaggedTensor):
            ids = ids.to_tensor(default_value=PAD_ID)
        ids = tf.cast(tf.convert_to_tensor(ids), tf.int32)
        rank = ids.shape.rank
        if rank not in (1, 2):
            raise ValueError(f"detokenize expects ids of rank 1 or 2, got shape {ids.shape}.")
        if rank == 1:
            ids = ids[tf.newaxis]
        before_eos = tf.math.cumsum(tf.cast(ids == EOS_ID, tf.int32), axis=1) == 0
        keep = before_eos & (ids != PAD_ID) & (ids != BOS_ID)
        text = self.sentencepiece.detokenize(tf.ragged.boolean_mask(ids, keep))
        return text[0] if rank == 1 else text

    def id_to_piece(self, ids) -> tf.Tensor:
        """Ids -> their SentencePiece pieces as tf.string (same shape).

        Example:
            >>> tok.id_to_piece([BOS_ID, EOS_ID]).numpy()  # doctest: +SKIP
            array([b'<s>', b'</s>'], dtype=object)
        """
        return self.sentencepiece.id_to_string(ids)


def _check_sampling_alpha(alpha: float, model_type: str) -> None:
    """Raises a ValueError naming the problem unless `alpha` suits subword sampling."""
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or alpha < 0:
        raise ValueError(f"subword sampling alpha must be a number >= 0 (0: off), got {alpha!r}.")
    if alpha and model_type != "unigram":
        raise ValueError(
            f"subword sampling (alpha {alpha}) needs a unigram SentencePiece model, not "
            f"{model_type!r}; set the tokenizer's model_type to 'unigram' or the alpha to 0."
        )


def _sentences(dataset: tf.data.Dataset, counter: list[int]) -> Iterator[str]:
    """The texts of (source, target) pairs, both sides, or of single texts."""
    for batch in dataset.batch(4096).as_numpy_iterator():
        sides = batch if isinstance(batch, tuple) else (batch,)
        counter[0] += len(sides[0])
        for side in sides:
            yield from (text.decode("utf-8") for text in side)


def _tag_list(languages: Sequence[str]) -> str:
    return ", ".join(languages) if languages else "no language (a model of one target language)"


def load_or_train_tokenizer(
    path: str,
    train_dataset: tf.data.Dataset,
    vocab_size: int,
    model_type: str = "unigram",
    *,
    character_coverage: float = 1.0,
    input_sentence_size: int = 0,
    seed: int = 0,
    user_defined_symbols: Sequence[str] = (),
) -> Tokenizer:
    """Loads the SentencePiece model `path` (`*.model`), or first trains it there on the
    (source, target) training pairs: one vocabulary for source and target sentences together
    (or on single texts: a classifier's). Pass the training split only.
    `input_sentence_size > 0` trains on that many sentences at most: both sides of the first
    half as many pairs of `train_dataset`, a random sample
    when the pairs come shuffled (`load_training_split`); 0 trains on every sentence.
    `user_defined_symbols`: pieces the vocabulary must hold whole (a multilingual run's
    target-language tags).

    Example:
        >>> train = load_translation_splits("multi30k/de-en", ["train"])["train"]
        >>> tok = load_or_train_tokenizer("/tmp/run/spm.model", train, 8000)  # doctest: +SKIP
    """
    if not path.endswith(".model"):
        raise ValueError(f"A SentencePiece model's path ends with .model, not {path!r}.")
    prefix = path.removesuffix(".model")
    if tf.io.gfile.exists(path):
        tokenizer = Tokenizer.from_file(path)
        remedy = "delete the file to train a new one, or use another workdir."
        if (tokenizer.vocab_size, tokenizer.model_type) != (vocab_size, model_type):
            raise ConfigError(
                f"{path} is a {tokenizer.model_type} model with {tokenizer.vocab_size} pieces, but "
                f"a {model_type} model with vocab_size={vocab_size} was asked for; {remedy}"
            )
        # A vocabulary may hold more target languages than the data uses, never fewer; a model
        # of one target language has no tags, a multilingual one needs them.
        wanted_languages = language_tags.languages_in_pieces(user_defined_symbols)
        if not set(wanted_languages) <= set(tokenizer.languages) or (
            bool(wanted_languages) != bool(tokenizer.languages)
        ):
            raise ConfigError(
                f"{path} has the target-language tags of {_tag_list(tokenizer.languages)}, but "
                f"the data asks for those of {_tag_list(wanted_languages)}; {remedy}"
            )
        logging.info("Loaded SentencePiece model %s (vocab %d)", path, tokenizer.vocab_size)
        return tokenizer
    logging.info(
        "Training a %s SentencePiece model (vocab %d) on the training split -> %s",
        model_type,
        vocab_size,
        path,
    )
    start, counter = time.perf_counter(), [0]
    if input_sentence_size:  # the sample is ours: SentencePiece trains on all it is given
        train_dataset = train_dataset.take(-(-input_sentence_size // 2))
    train_sentencepiece(
        _sentences(train_dataset, counter),
        prefix,
        vocab_size,
        model_type,
        character_coverage,
        seed=seed,
        user_defined_symbols=user_defined_symbols,
    )
    logging.info(
        "Trained %s on %d examples in %.1f s", path, counter[0], time.perf_counter() - start
    )
    return Tokenizer.from_file(path)
