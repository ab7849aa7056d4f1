"""What a CTranslate2 export holds beside CTranslate2's own model: the SentencePiece model and the
decoding options (``decoding.json``), read by the runtime and written by the export.

Imports no TensorFlow: running an export needs ctranslate2 and sentencepiece only.
"""

from __future__ import annotations

import dataclasses
import json
import os

from common.errors import UserError
from decoding.options import SearchOptions

# The weight types an export can have. Not bfloat16: CTranslate2 converts weights to it only
# with PyTorch installed, which nothing else here needs.
QUANTIZATIONS = ("float32", "int8", "int8_float32", "int16")
DECODING_FILE = "decoding.json"
TOKENIZER_FILE = "spm.model"


class ExportError(UserError, ValueError):
    """A model or option a CTranslate2 export cannot express, or an export CTranslate2 cannot
    load; the message names it and what to do."""


@dataclasses.dataclass(frozen=True)
class DecodingSettings:
    """What ``decoding.json`` holds: the search a CTranslate2 export translates with by default.

    ``length_penalty`` is CTranslate2's (scores divided by ``length ** length_penalty``), not
    GNMT's ``((5 + length) / 6) ** alpha`` (``gnmt_length_penalty``, the work directory's, kept
    for reference). The output length limits and source truncation are the work directory's.
    """

    beam_size: int
    length_penalty: float
    gnmt_length_penalty: float
    max_length_ratio: float
    max_length_offset: float
    max_length: int | None
    max_source_length: int
    quantization: str

    @classmethod
    def read(cls, directory: str) -> DecodingSettings:
        path = os.path.join(directory, DECODING_FILE)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"No {DECODING_FILE} in {directory}: it is not a CTranslate2 export of this "
                "project; write one with `python export.py --workdir=DIR --format=ctranslate2 "
                f"--output={directory}`."
            )
        with open(path, encoding="utf-8") as file:
            return cls(**json.load(file))

    def search_options(self, beam_size: int | None = None) -> SearchOptions:
        """The search's options (output length limits, beam size; GNMT's length penalty)."""
        return SearchOptions(
            beam_size=self.beam_size if beam_size is None else beam_size,
            length_penalty=self.gnmt_length_penalty,
            max_length=self.max_length,
            max_length_ratio=self.max_length_ratio,
            max_length_offset=self.max_length_offset,
        )
