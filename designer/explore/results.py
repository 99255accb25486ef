"""Where a sweep's rows go: a CSV or Parquet file, streamed beside the target and put in place when
the run ends (`designer.io.outputs.StreamedOutput`).

Until then an existing results file stays as it was: a run refused, unreachable or stopped
before its first row replaces nothing. Every finished row is flushed as it arrives, so a run that
ends early (Ctrl+C, a lost cluster) keeps its rows under the final name, and a process killed
outright leaves them in the temporary file it names at the start. Parquet rows stream the same
way, as JSON lines, and become a Parquet file at the end with column types read from all of them
(a column whose values mix numbers and text is text: nothing is dropped).
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Protocol

from designer.explore.spec import Sweep
from designer.io.exports import csv_writer
from designer.io.outputs import StreamedOutput
from designer.model.errors import DesignerError

PARQUET_ROW_GROUP = 4096  # rows per Parquet row group when converting: bounded memory, any size of sweep


class ResultsError(DesignerError):
    pass


def columns(sweep: Sweep) -> list[str]:
    return ["point", *sweep.axes, *sweep.figures, "meets", "unpriced", "pruned", "error", "design"]


class Rows(Protocol):
    temporary: str
    written: int

    def write(self, row: dict) -> None: ...
    def finish(self) -> None: ...
    def abandon(self) -> None: ...


class CsvRows:
    """Rows appended to a CSV file as they arrive, flushed each time. Figures that are lists or
    objects are written as JSON; text a spreadsheet would run as a formula is escaped."""

    def __init__(self, path: str | os.PathLike, header: list[str]):
        self.path = os.fspath(path)
        self._output = _stream(path, ".partial")
        self.temporary = self._output.temporary
        self._header = header
        self.written = 0
        _append(self._output, _csv_line(header), self.path, 0)

    def write(self, row: dict) -> None:
        _append(self._output, _csv_line([_cell(row.get(name)) for name in self._header]), self.path, self.written)
        self.written += 1

    def finish(self) -> None:
        _finish(self._output, self.path, self.written)

    def abandon(self) -> None:
        self._output.abandon()


def _csv_line(cells: list) -> bytes:
    line = io.StringIO()
    csv_writer(line).writerow(cells)
    return line.getvalue().encode("utf-8")


def _append(output: StreamedOutput, data: bytes, path: str, written: int) -> None:
    try:
        output.append(data)
    except OSError as exc:
        # The caller still puts the whole rows before this one in place (or names where they are).
        raise ResultsError(f"{path}: cannot be written ({exc.strerror or exc}); the {written:,} rows before it "
                           "are kept, whole") from None


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


def require_pyarrow() -> None:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ResultsError("--parquet needs pyarrow: pip install pyarrow (or write CSV)") from None


class ParquetRows:
    """Rows streamed as JSON lines beside the target, converted to one Parquet file at the end:
    a kill midway leaves every finished row readable in the temporary file (a Parquet file
    written in row groups is unreadable without the footer only its close writes)."""

    def __init__(self, path: str | os.PathLike, header: list[str]):
        require_pyarrow()
        self.path = os.fspath(path)
        self._header = header
        self._output = _stream(path, ".jsonl.partial")
        self.temporary = self._output.temporary
        self.written = 0

    def write(self, row: dict) -> None:
        line = json.dumps([row.get(name) for name in self._header], ensure_ascii=False) + "\n"
        _append(self._output, line.encode("utf-8"), self.path, self.written)
        self.written += 1

    def finish(self) -> None:
        self._output.file.close()
        try:
            converted = StreamedOutput(self.path, suffix=".parquet.partial")
        except OSError as exc:
            raise ResultsError(f"{self.path}: cannot be written ({exc.strerror or exc}); the {self.written:,} rows "
                               f"are kept, as JSON lines, in {self.temporary}") from None
        try:
            _convert(self.temporary, converted.file, self._header)
            converted.finish()
        except BaseException as exc:
            converted.abandon()
            if isinstance(exc, OSError):
                raise ResultsError(f"{self.path}: cannot be written ({exc.strerror or exc}); the "
                                   f"{self.written:,} rows are kept, as JSON lines, in {self.temporary}") from None
            raise
        os.unlink(self.temporary)

    def abandon(self) -> None:
        self._output.abandon()


def _column_types(lines_path: str, header: list[str]) -> list:
    """Each column's Arrow type from every value in it: true/false → bool, whole numbers → int64,
    numbers → float64, anything else or a mix → text."""
    import pyarrow as pa

    kinds: list[set[str]] = [set() for _ in header]
    with open(lines_path, encoding="utf-8") as rows:
        for line in rows:
            for kind, value in zip(kinds, json.loads(line)):
                if value is not None:
                    kind.add("bool" if isinstance(value, bool) else "int" if isinstance(value, int)
                             else "float" if isinstance(value, float) else "text")
    types = []
    for kind in kinds:
        if kind == {"bool"}:
            types.append(pa.bool_())
        elif kind == {"int"}:
            types.append(pa.int64())
        elif kind and kind <= {"int", "float"}:
            types.append(pa.float64())
        else:
            types.append(pa.string())
    return types


def _convert(lines_path: str, out: Any, header: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(list(zip(header, _column_types(lines_path, header))))
    with pq.ParquetWriter(out, schema) as writer, open(lines_path, encoding="utf-8") as rows:
        group: list[list] = []
        for line in rows:
            group.append(json.loads(line))
            if len(group) >= PARQUET_ROW_GROUP:
                writer.write_table(_table(group, schema))
                group.clear()
        if group:
            writer.write_table(_table(group, schema))


def _table(group: list[list], schema: Any) -> Any:
    import pyarrow as pa

    data = {}
    for index, field in enumerate(schema):
        values = [row[index] for row in group]
        if field.type == pa.string():
            values = [None if v is None else v if isinstance(v, str)
                      else json.dumps(v, sort_keys=True) if isinstance(v, (dict, list, bool)) else repr(v)
                      for v in values]
        elif field.type == pa.float64():
            values = [None if v is None else float(v) for v in values]
        data[field.name] = values
    return pa.table(data, schema=schema)


def _stream(path: str | os.PathLike, suffix: str) -> StreamedOutput:
    try:
        return StreamedOutput(path, suffix=suffix)
    except OSError as exc:
        raise ResultsError(f"{os.fspath(path)}: cannot be written ({exc.strerror or exc})") from None


def _finish(output: StreamedOutput, path: str, written: int) -> None:
    try:
        output.finish()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be written ({exc.strerror or exc}); the {written:,} rows are kept in "
                           f"{output.temporary}") from None
