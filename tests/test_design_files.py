import json
import os

import pytest

from designer.io.files import DesignFileError, dumps, load_design, save_design
from designer.topologies import generate


@pytest.fixture()
def design_file(tmp_path):
    path = tmp_path / "pod.cluster.json"
    save_design(generate("rail-fat-tree", nodes=64), path)
    return path


def test_save_load_save_is_byte_identical(design_file, tmp_path):
    first = design_file.read_bytes()
    again = tmp_path / "again.cluster.json"
    save_design(load_design(design_file), again)
    assert again.read_bytes() == first


def test_file_is_human_diffable(design_file):
    text = design_file.read_text()
    document = json.loads(text)
    assert document["format"] == "cluster-designer" and document["version"] == 1
    assert text.startswith("{\n  ")  # indented
    ids = [i["id"] for i in document["items"]]
    assert ids == sorted(ids)
    assert list(document) == sorted(document)


def test_save_is_atomic_and_keeps_old_file_on_failure(design_file, monkeypatch):
    before = design_file.read_bytes()
    design = load_design(design_file)
    design.name = "changed"

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(DesignFileError,
                       match=r"cannot be written \(No space left on device\); the previous file is unchanged"):
        save_design(design, design_file)
    assert design_file.read_bytes() == before
    assert [p.name for p in design_file.parent.iterdir()] == [design_file.name]


def _refused(tmp_path, document_or_text, name="bad.cluster.json"):
    path = tmp_path / name
    path.write_text(document_or_text if isinstance(document_or_text, str) else json.dumps(document_or_text))
    with pytest.raises(DesignFileError) as caught:
        load_design(path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    assert "\n" not in message
    return message


def _document(items=None, links=None, **top):
    doc = {"format": "cluster-designer", "version": 1, "name": "x",
           "items": items if items is not None else [{"id": "s", "kind": "server", "part": "dgx-h100"},
                                                     {"id": "g", "kind": "accelerator", "part": "h100-sxm",
                                                      "parent": "s"}],
           "links": links or []}
    doc.update(top)
    return doc


def test_bad_json_names_line_and_column(tmp_path):
    assert "not valid JSON (line 2, column" in _refused(tmp_path, '{"format":\n ]')


def test_wrong_type_names_the_json_path(tmp_path):
    doc = _document(items=[{"id": "s", "kind": "server", "part": "dgx-h100", "x": "left"}])
    assert _refused(tmp_path, doc).endswith(
        ": $.items[0].x: expected a number from -1,000,000,000 to 1,000,000,000, got \"left\"")


def test_unknown_part_is_refused(tmp_path):
    doc = _document(items=[{"id": "s", "kind": "server", "part": "dgx-h9000"}])
    assert _refused(tmp_path, doc).endswith(": $.items[0].part: unknown part 'dgx-h9000' (not in the catalogue)")


def test_dangling_link_is_refused(tmp_path):
    doc = _document(links=[{"id": "l", "a": "g", "b": "ghost", "medium": "nvlink4", "lanes": 1}])
    assert _refused(tmp_path,
                    doc).endswith(": $.links[0].b: link end 'ghost' is not an item of this design (dangling link)")


def test_future_version_is_refused_by_number(tmp_path):
    message = _refused(tmp_path, _document(version=7))
    assert ": $.version: the file is version 7" in message and "reads up to version 1" in message


def test_not_a_design_file(tmp_path):
    assert ": $.format: " in _refused(tmp_path, {"hello": "world"})


def test_billion_copy_group_is_refused_without_building(tmp_path):
    doc = _document(items=[{"id": "g", "kind": "group", "count": 10**9},
                           {"id": "s", "kind": "server", "part": "dgx-h100", "parent": "g"}])
    assert _refused(tmp_path, doc).endswith(
        ": $.items[0].count: expected a whole number from 1 to 1,000,000, got 1000000000")


def test_nested_groups_multiplying_past_the_limit_are_refused(tmp_path):
    doc = _document(items=[{"id": "a", "kind": "group", "count": 100000},
                           {"id": "b", "kind": "group", "count": 100000, "parent": "a"}])
    assert "copies, above the limit" in _refused(tmp_path, doc)


def test_containment_cycle_is_refused(tmp_path):
    doc = _document(items=[{"id": "a", "kind": "group", "parent": "b"}, {"id": "b", "kind": "group", "parent": "a"}])
    assert "containment cycle" in _refused(tmp_path, doc)


def test_deeply_nested_json_is_refused(tmp_path):
    assert "nested too deeply" in _refused(tmp_path, "[" * 100000 + "]" * 100000)


def test_nothing_is_executed(tmp_path):
    doc = _document()
    doc["name"] = "__import__('os').system('touch pwned')"
    path = tmp_path / "x.cluster.json"
    path.write_text(json.dumps(doc))
    assert load_design(path).name == doc["name"]
    assert not (tmp_path / "pwned").exists()


def test_missing_file(tmp_path):
    with pytest.raises(DesignFileError, match="cannot be read"):
        load_design(tmp_path / "nope.cluster.json")


def test_dumps_round_trip_preserves_everything():
    design = generate("rail-fat-tree", nodes=64)
    from designer.io.files import loads

    again = loads(dumps(design))
    assert again.items == design.items and again.links == design.links and again.settings == design.settings
