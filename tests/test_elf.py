"""push_envs._elf: the symbol table of an object file, against LLVM's own view of the
module the object was compiled from."""

from __future__ import annotations

import llvmlite.binding as ll
import pytest

from push_envs import _elf

_IR = """
@data = global i64 7
@table = private unnamed_addr constant [2 x i64] [i64 1, i64 2]
@weak_data = linkonce_odr global i64 3
declare double @outside(double)

define double @first(double %x) {
  %y = fmul double %x, %x
  %z = call double @outside(double %y)
  ret double %z
}
define internal i64 @hidden(i64 %a) {
  %p = getelementptr [2 x i64], ptr @table, i64 0, i64 %a
  %v = load i64, ptr %p
  ret i64 %v
}
define i64 @second(i64 %a, i64 %b) {
  %c = add i64 %a, %b
  %d = call i64 @hidden(i64 %c)
  ret i64 %d
}
"""


def _object_code() -> bytes:
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    tm = ll.Target.from_default_triple().create_target_machine()
    return tm.emit_object(ll.parse_assembly(_IR))


def test_symbols_give_kind_binding_definition_and_size():
    syms = {s.name: s for s in _elf.symbols(_object_code())}
    assert syms["first"].kind == _elf.STT_FUNC and syms["first"].binding == _elf.STB_GLOBAL
    assert syms["first"].defined and syms["first"].size > 0
    assert syms["hidden"].binding == 0 and syms["hidden"].defined  # internal: a local symbol
    assert syms["data"].kind == _elf.STT_OBJECT and syms["data"].size == 8
    assert syms["weak_data"].binding == _elf.STB_WEAK
    assert not syms["outside"].defined  # a declaration: undefined here


def test_defined_is_llvms_definitions_but_the_private_ones():
    mod = ll.parse_assembly(_IR)
    llvm = {g.name for gs in (mod.functions, mod.global_variables) for g in gs
            if not g.is_declaration}
    assert llvm - _elf.defined(_object_code()) == {"table"}  # private: no symbol
    assert _elf.defined(_object_code()) == {"data", "weak_data", "first", "hidden", "second"}


def test_not_an_elf_object_is_refused():
    assert _elf.is_elf64(_object_code())
    assert not _elf.is_elf64(b"\xcf\xfa\xed\xfe" + b"\x00" * 60)  # Mach-O
    assert not _elf.is_elf64(b"\x7fELF")  # truncated
    with pytest.raises(ValueError, match="not an ELF64"):
        _elf.symbols(b"\x00" * 64)
