"""The special token ids every layer agrees on, and their SentencePiece pieces.

SentencePiece models are trained with these ids (``data_pipeline.tokenizer``), the model masks
PAD (``transformer``), searches start with BOS and stop at EOS (``decoding``), and a CTranslate2
export maps them by piece (``inference.ctranslate2_export``). Defined here once.
"""

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3
SPECIAL_PIECES = {PAD_ID: "<pad>", UNK_ID: "<unk>", BOS_ID: "<s>", EOS_ID: "</s>"}
