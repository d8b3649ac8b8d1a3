"""The dialect route for a function the walk cannot translate: `lower_function` on a
copy, then xDSL's `convert_module`: the same code, only slower, and an op neither route
supports fails there with the dialect passes' located message."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.glow_ir_to_loops.functions import KERNEL_ATTR
from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import FunctionText, global_name


def fallback(f: func.FuncOp, module: ModuleOp, triple: str) -> FunctionText:
    """`f` the dialect route (a copy of it, `lower_function`, then xDSL's
    `convert_module`), for a function the walk cannot translate."""
    from xdsl.backend.llvm.convert import convert_module
    from xdsl.dialects import llvm
    from xdsl.passes import PassPipeline

    from glow_mlir.conversion.func_to_llvm import check_func
    from glow_mlir.conversion.loops_to_llvm import loops_to_llvm_spec, lower_function
    from glow_mlir.conversion.pass_runner import all_passes
    from glow_mlir.dialects.context import make_context

    name = f.sym_name.data
    kernel = KERNEL_ATTR in f.attributes
    pipeline = PassPipeline.parse_spec(all_passes(), ",".join(loops_to_llvm_spec()))
    copy = f.clone()
    ModuleOp([copy])  # lower_function detaches it from a module
    lowered = lower_function(copy, pipeline, make_context())
    piece = ModuleOp([])
    defined: set[str] = set()
    for op in lowered:
        piece.body.block.add_op(op)
        if isinstance(op, llvm.FuncOp):
            defined.add(op.sym_name.data)
    for other in module.ops:  # what it may call
        if isinstance(other, func.FuncOp) and other.sym_name.data not in defined:
            try:
                callee_type = check_func(other)
            except PassFailedException:
                continue  # refused where it is defined (its own fallback)
            piece.body.block.add_op(llvm.FuncOp(other.sym_name.data, callee_type,
                                                linkage=llvm.LinkageAttr("external")))
    ir_module = convert_module(piece, fallback_target_triple=triple)
    fn = ir_module.get_global(name)
    decls = {g.name: str(g).strip() for g in ir_module.functions
             if g.is_declaration and g.name != name}

    def render(linkage: str, noinline: bool) -> str:
        fn.linkage = linkage
        if noinline:
            fn.attributes.add("noinline")
        elif "noinline" in fn.attributes:
            fn.attributes.remove("noinline")
        return str(fn)

    declaration = f"declare {str(fn.function_type.return_type)} {global_name(name)}(" \
                  f"{', '.join(str(a) for a in fn.function_type.args)})"
    return FunctionText(name, kernel, declaration, render if fn.blocks else None, decls)
