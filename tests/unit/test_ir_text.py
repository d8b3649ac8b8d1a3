"""Reading and writing IR text (glow_mlir.ir.text): located ops, located diagnostics for
verifier and parse errors (also in `--split-input-file` chunks), MLIR-style formatting."""

from __future__ import annotations

from io import StringIO

import pytest
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.utils.exceptions import ParseError

from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow import OPS_BY_NAME
from glow_mlir.ir.text import (
    OpDiagnostic,
    format_parse_error,
    location_text,
    parse_module,
    print_module,
    verify_module,
)

GOOD = """\
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = glow.relu %x : tensor<2x3xf32>
  %1 = "glow.transpose"(%0) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}
"""


def parse(text: str, name: str = "in.mlir", offset: int = 0):
    return parse_module(make_context(), text, name, offset)


def ops_by_name(module):
    return {op.name: op for op in module.walk()}


def test_every_op_is_located_at_its_name():
    m = parse(GOOD)
    ops = ops_by_name(m)
    assert location_text(ops["func.func"]) == "in.mlir:1:1"
    assert location_text(ops["glow.relu"]) == "in.mlir:2:8"       # custom form
    assert location_text(ops["glow.transpose"]) == "in.mlir:3:8"  # generic form, at the quote
    assert location_text(ops["func.return"]) == "in.mlir:4:3"
    assert isinstance(ops["glow.relu"].location, FileLineColLoc)


def test_explicit_locations_are_kept():
    text = GOOD.replace("%0 = glow.relu %x : tensor<2x3xf32>",
                        '%0 = glow.relu %x : tensor<2x3xf32> loc("model.onnx":7:1)')
    assert location_text(ops_by_name(parse(text))["glow.relu"]) == "model.onnx:7:1"


def test_line_offset_shifts_locations():
    m = parse(GOOD, "split.mlir", offset=10)
    assert location_text(ops_by_name(m)["glow.relu"]) == "split.mlir:12:8"


def test_verifier_failure_is_located_at_the_innermost_op():
    text = GOOD.replace("tensor<3x2xf32>", "tensor<2x2xf32>")  # a wrong transpose result
    with pytest.raises(OpDiagnostic) as info:
        verify_module(parse(text, "v.mlir", offset=4))
    err = info.value
    assert err.op.name == "glow.transpose"
    assert err.message == "result shape is 2x2, expected 3x2 (input 2x3 shuffled by [1, 0])"
    assert str(err) == ("v.mlir:7:8: error: 'glow.transpose' op result shape is 2x2, "
                        "expected 3x2 (input 2x3 shuffled by [1, 0])")


def test_irdl_constraint_failure_is_one_line_without_the_module():
    text = ('func.func @f(%x: tensor<2xf32>) {\n'
            '  %0 = "glow.relu"(%x) : (tensor<2xf32>) -> tensor<3xf32>\n'
            '  func.return\n}\n')
    with pytest.raises(OpDiagnostic) as info:
        verify_module(parse(text))
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("in.mlir:2:8: error: 'glow.relu' op result 'result' at position 0")
    assert "builtin.module" not in text


def test_diagnostic_without_location():
    from xdsl.dialects.builtin import TensorType, f32

    from glow_mlir.dialects.glow import ReluOp

    op = ReluOp.create(result_types=[TensorType(f32, [2])])
    assert str(OpDiagnostic(op, "is odd")) == "error: 'glow.relu' op is odd"


def parse_error(text: str, name: str = "p.mlir", offset: int = 0) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, name, offset)
    return info.value


def test_parse_error_format_is_mlir_style():
    err = parse_error("func.func @f(%x: tensor<2xf32>) {\n  %0 = glow.frob %x : tensor<2xf32>\n"
                      "  func.return\n}\n")
    assert format_parse_error(err) == (
        "p.mlir:2:8: error: unknown op 'glow.frob'\n"
        "  %0 = glow.frob %x : tensor<2xf32>\n"
        "       ^^^^^^^^^")


def test_parse_error_line_offset_in_split_chunks():
    err = parse_error("\nfunc.func @f() {\n  %0 = glow.frob : tensor<2xf32>\n}\n", offset=20)
    assert format_parse_error(err).startswith("p.mlir:23:8: error: unknown op 'glow.frob'")


def test_unknown_dialect_suggests_the_flag():
    err = parse_error('func.func @f() {\n  "foo.bar"() : () -> ()\n  func.return\n}\n')
    assert err.msg == ("unknown op 'foo.bar' (no dialect 'foo'; "
                       "--allow-unregistered-dialect accepts it)")


def test_undefined_value_is_reported_at_its_use():
    err = parse_error("func.func @f(%x: tensor<2xf32>) {\n  // %y is a typo\n"
                      "  %0 = glow.relu %y : tensor<2xf32>\n  func.return\n}\n")
    assert format_parse_error(err).startswith("p.mlir:3:18: error: use of undefined value '%y'")


def test_invalid_type_is_a_located_parse_error():
    err = parse_error("func.func @f(%x: tensor<2x!glow.quant<i8, scale = -1.0, offset = 0>>) {\n"
                      "  func.return\n}\n")
    text = format_parse_error(err)
    assert text.startswith("p.mlir:1:27: error: invalid type !glow.quant: "
                           "!glow.quant scale must be positive and finite, got -1.0")


def test_constraint_broken_while_parsing_custom_form_is_located():
    err = parse_error("func.func @f(%x: tensor<*xf32>) {\n  %0 = glow.relu %x : tensor<*xf32>\n"
                      "  func.return\n}\n")
    assert format_parse_error(err).startswith("p.mlir:2:8: error: 'glow.relu' op ")


def test_truncated_input():
    err = parse_error("func.func @f(%x: tensor<2xf32>) {\n  %0 = glow.relu %x : tensor<2xf32>\n")
    assert err.msg.startswith("unexpected end of input")
    assert format_parse_error(err).startswith("p.mlir:3:1: error: unexpected end of input")


def test_control_characters_are_escaped():
    err = parse_error("\x03\x04garbage")
    text = format_parse_error(err)
    assert "\\x03" in text and "\x03" not in text


def test_constant_literal_errors_point_at_the_literal():
    err = parse_error("func.func @f() {\n"
                      "  %0 = glow.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n"
                      "  func.return\n}\n")
    assert format_parse_error(err).startswith("p.mlir:2:22: error: Shape mismatch in dense literal")


def test_print_module_writes_resources_and_roundtrips():
    ctx = make_context()
    text = ("func.func @f() -> tensor<1xf32> {\n"
            "  %w = glow.constant dense_resource<w> : tensor<1xf32>\n"
            "  func.return %w : tensor<1xf32>\n}\n"
            '{-#\n  dialect_resources: {\n    builtin: {\n      w: "0x040000000000803f"\n'
            "    }\n  }\n#-}\n")
    m = parse_module(ctx, text, "r.mlir")
    out = StringIO()
    print_module(m, out, ctx)
    printed = out.getvalue()
    assert "dialect_resources" in printed and 'w: "0x040000000000803f"' in printed
    out2 = StringIO()
    print_module(parse_module(ctx, printed, "r2.mlir"), out2, ctx, generic=True)
    assert '"glow.constant"() {value = dense_resource<w> : tensor<1xf32>}' in out2.getvalue()
    assert 'w: "0x040000000000803f"' in out2.getvalue()


def test_print_without_resources_has_no_metadata():
    ctx = make_context()
    out = StringIO()
    print_module(parse_module(ctx, GOOD, "g.mlir"), out, ctx)
    assert "{-#" not in out.getvalue()


def test_no_implicit_module():
    with pytest.raises(ParseError):
        parse_module(make_context(), GOOD, "g.mlir", implicit_module=False)
    wrapped = "builtin.module {\n" + GOOD + "}\n"
    parse_module(make_context(), wrapped, "g.mlir", implicit_module=False)


def test_ops_by_name_table_is_complete():
    # The custom and generic forms of every op are exercised by
    # tests/filecheck/dialects/glow/roundtrip.mlir; this only guards the table itself.
    from glow_mlir.dialects.glow import ALL_OPS

    assert OPS_BY_NAME == {op.name: op for op in ALL_OPS}
    assert all(name.startswith("glow.") for name in OPS_BY_NAME)


# ------------------------------------------------------------------ dominance

def dominance_error(text: str) -> str:
    with pytest.raises(OpDiagnostic) as info:
        verify_module(parse(text, "d.mlir"))
    return str(info.value)


def test_use_before_definition_is_located_at_the_use():
    """Two lines swapped: MLIR's dominance error, at the use, naming the definition."""
    text = GOOD.replace("  %0 = glow.relu %x : tensor<2x3xf32>\n", "")
    text = text.replace("  func.return", "  %0 = glow.relu %x : tensor<2x3xf32>\n  func.return")
    assert dominance_error(text) == (
        "d.mlir:2:8: error: 'glow.transpose' op operand #0 does not dominate this use "
        "(defined later, at d.mlir:3:8)")


def test_use_in_a_nested_region_of_a_value_defined_after_its_op():
    """A region sees only what its op's block defined before the op."""
    text = """\
func.func @f(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %0 : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %0 = glow.relu %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""
    assert dominance_error(text).startswith(
        "d.mlir:3:5: error: 'scf.yield' op operand #0 does not dominate this use")
    verify_module(parse(text.replace("scf.yield %0", "scf.yield %x")))


def test_blocks_of_a_cfg_in_any_order_are_accepted():
    """A value of another block of the same region is left alone (here ^bb2 dominates
    ^bb1 though it comes later in the text, which MLIR accepts)."""
    verify_module(parse("""\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb2
^bb1:
  func.return %0 : tensor<4xf32>
^bb2:
  %0 = glow.relu %x : tensor<4xf32>
  cf.br ^bb1
}
"""))


# ---------------------------------------------------------------------------- diagnostics


def _ops(text: str, name: str = "d.mlir"):
    module = parse_module(make_context(), text, name)
    return module, [op for op in module.walk() if op.name.startswith("glow.")]


THREE_RELUS = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.relu %x : tensor<4xf32>
  %1 = glow.relu %0 : tensor<4xf32>
  %2 = glow.relu %1 : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""


def test_a_diagnostic_error_lists_each_op_after_its_summary():
    from xdsl.utils.exceptions import PassFailedException

    from glow_mlir.ir.errors import UserError
    from glow_mlir.ir.text import DiagnosticError, Diagnostics

    _, (a, b, c) = _ops(THREE_RELUS)
    found = Diagnostics()
    found.check()  # nothing collected: nothing raised
    found.error(a, "first")
    found.error(c, "third")
    with pytest.raises(DiagnosticError) as info:
        found.check("2 problems")
    err = info.value
    assert isinstance(err, UserError) and isinstance(err, PassFailedException)
    assert err.ops() == [a, c] and [d.line for d in err.diagnostics] == [2, 4]
    assert str(err) == ("2 problems\n"
                        "d.mlir:2:8: error: 'glow.relu' op first\n"
                        "d.mlir:4:8: error: 'glow.relu' op third")
    assert str(DiagnosticError.at(b, "alone")) == "d.mlir:3:8: error: 'glow.relu' op alone"


def test_a_long_report_prints_the_first_errors_and_keeps_all():
    from glow_mlir.ir.text import DiagnosticError, OpDiagnostic

    _, (a, _, _) = _ops(THREE_RELUS)
    err = DiagnosticError([OpDiagnostic(a, f"#{i}") for i in range(25)], "many")
    lines = str(err).splitlines()
    assert len(err.diagnostics) == 25 and len(lines) == 1 + DiagnosticError.MAX_PRINTED + 1
    assert lines[-1] == f"... and {25 - DiagnosticError.MAX_PRINTED} more"


def test_an_op_without_a_file_location_is_placed_by_its_node_or_position():
    from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, UnknownLoc

    from glow_mlir.ir.text import DiagnosticError

    _, (a, b, _) = _ops(THREE_RELUS)
    a.location = NameLoc(StringAttr("relu_1"), NoneAttr())
    b.location = UnknownLoc()
    err = DiagnosticError.at(a, "named")
    assert str(err) == "error: 'glow.relu' op named (at node 'relu_1')"
    assert err.diagnostics[0].line is None
    assert str(DiagnosticError.at(b, "placed")) == "error: 'glow.relu' op placed (at #1 in @f)"


def test_a_diagnostic_error_pickles_as_its_text():
    import pickle

    from glow_mlir.ir.errors import UserError
    from glow_mlir.ir.text import DiagnosticError

    _, (a, _, _) = _ops(THREE_RELUS)
    back = pickle.loads(pickle.dumps(DiagnosticError.at(a, "x", "summary")))
    assert type(back) is UserError and str(back) == "summary\nd.mlir:2:8: error: 'glow.relu' op x"


def test_tools_print_a_diagnostic_error_one_line_per_op():
    from xdsl.dialects.builtin import UnknownLoc

    from glow_mlir.ir.text import DiagnosticError, OpDiagnostic
    from glow_mlir.tools.errors import report

    _, (a, b, _) = _ops(THREE_RELUS)
    b.location = UnknownLoc()
    err = DiagnosticError([OpDiagnostic(a, "one"), OpDiagnostic(b, "two")], "two errors")
    assert report("tool", err) == ("tool: error: two errors\n"
                                   "d.mlir:2:8: error: 'glow.relu' op one\n"
                                   "tool: error: 'glow.relu' op two (at #1 in @f)")
    assert report("tool", DiagnosticError.at(b, "alone")) == \
        "tool: error: 'glow.relu' op alone (at #1 in @f)"
