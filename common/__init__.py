"""Helpers that training and inference both use, importing no other project package.

``files`` (atomic writes and the JSON files of a work directory), ``storage`` (a write the file
system refuses, as one line) and ``metrics`` (sacreBLEU's BLEU and chrF on detokenized text).
"""
