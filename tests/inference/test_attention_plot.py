from xml.etree import ElementTree

import numpy as np
import pytest

from inference.attention_plot import attention_svg, viridis

SVG = "{http://www.w3.org/2000/svg}"


def test_every_weight_is_one_cell_coloured_by_its_value_with_it_on_hover():
    weights = np.array([[[0.0, 1.0, 0.0], [0.25, 0.25, 0.5]]] * 5)  # 5 heads, 2 x 3
    weights[4, 0] = [0.5, 0.5, 0.0]
    svg = ElementTree.fromstring(attention_svg(weights, ["▁Ein", "▁<Hund>", "</s>"], ["a", "&"]))
    cells = [rect for rect in svg.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
    assert len(cells) == 5 * 2 * 3
    assert [cell.get("fill") for cell in cells[:3]] == [viridis(0), viridis(1), viridis(0)]
    assert cells[-6].find(f"{SVG}title").text == "a ← ▁Ein: 0.500"
    texts = [text.text for text in svg.iter(f"{SVG}text")]
    assert texts.count("▁<Hund>") == 5 and texts.count("&") == 5  # escaped in the file, read back
    # Four heads a row: the fifth starts a second row, below the first, under head 1.
    heads = {t.text: t for t in svg.iter(f"{SVG}text") if t.text.startswith("head")}
    assert list(heads) == [f"head {h}" for h in range(1, 6)]
    y, x = ({name: float(t.get(a)) for name, t in heads.items()} for a in ("y", "x"))
    assert y["head 1"] == y["head 4"] < y["head 5"] and x["head 1"] == x["head 5"] < x["head 4"]


def test_viridis_runs_from_dark_purple_to_yellow_and_clips():
    assert viridis(0.0) == viridis(-1.0) == "#440154"
    assert viridis(1.0) == viridis(7.0) == "#fde725"
    assert viridis(0.5) == "#21918c"


def test_weights_of_another_shape_are_a_clear_error():
    with pytest.raises(ValueError, match=r"weights must be \(heads, 1 output pieces, 2 source"):
        attention_svg(np.zeros((2, 2, 1)), ["a", "b"], ["c"])
