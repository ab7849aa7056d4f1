"""Markup through a translator: the copy model writes its source again, so a document's tags
must come back where they were (its word alignments are the diagonal)."""

from common.documents import translate_document
from common.markup import Markup

DOCUMENT = (
    "<h1>Ein <b>Hund</b></h1>\n"
    '<p>Ein <b>großer</b> Hund rennt über <i>die grüne</i> Wiese. Ein Mann <a href="#x">'
    "wirft</a> einen Ball.</p>\n\n"
    "<p>Zwei Kinder spielen<br>im <em>Sand</em> am Strand.</p>"
)


def test_a_documents_tags_come_back_where_they_were_from_the_copy_model(copy_translators):
    translator, _ = copy_translators[4]
    plain = Markup.parse(DOCUMENT).plain
    assert translate_document(translator, plain, language="de") == plain  # the copy model
    assert translate_document(translator, DOCUMENT, language="de", markup=True) == DOCUMENT
