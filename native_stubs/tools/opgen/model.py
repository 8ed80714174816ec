"""What the generator knows about an operator once its definition is read (see load.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

# Operator parameter kinds of the signature registry (pyaclnn/signatures/model.py) -> op_kind (opbase.h).
C_KIND = {
    "tensor": "OP_K_TENSOR", "tensor_list": "OP_K_TENSOR_LIST", "scalar": "OP_K_SCALAR",
    "scalar_list": "OP_K_SCALAR_LIST", "int_array": "OP_K_INT_ARRAY", "float_array": "OP_K_FLOAT_ARRAY",
    "bool_array": "OP_K_BOOL_ARRAY", "int": "OP_K_INT", "enum": "OP_K_INT", "double": "OP_K_DOUBLE",
    "float": "OP_K_DOUBLE", "bool": "OP_K_BOOL", "dtype": "OP_K_DTYPE", "string": "OP_K_STRING",
    "pointer": "OP_K_POINTER",
}
C_ROLE = {"in": "OP_IN", "out": "OP_OUT", "inout": "OP_INOUT"}
SOCS = ("other", "A2", "950")          # index = pyaclnn_soc_family
FIDELITY_CLASSES = ("a", "b", "c", "s", "v")


class DefinitionError(Exception):
    """A definition file says something the generator cannot use; the message names the file and operator."""


@dataclass(frozen=True)
class DtypeList:
    family: str                        # "" for the shared lists of lists.toml; <family>_<file> for a file
                                       # whose name is not its family's (the C name is unique per file)
    name: str
    socs: tuple[tuple[str, ...], ...]  # dtype names (without ACL_) for other, A2, 950

    @property
    def c_name(self) -> str:
        return f"DL_{self.family or 'shared'}_{self.name}"


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str                         # "const aclTensor*", normalised as the header parser does
    kind: str                          # signature registry kind ("tensor", "int", ...)
    role: str                          # "in" | "out" | "inout"
    optional: bool


@dataclass(frozen=True)
class Step:
    name: str                          # the check: C function opc_<name>
    params: tuple[int, ...]            # parameter operands, by index
    labels: tuple[str | None, ...]     # the name a message uses for each operand (None: the parameter's)
    n: int | None                      # integer operand
    dlist: DtypeList | None            # dtype list operand
    text: str | None                   # string operand
    source: str                        # as written, for messages and the catalog


@dataclass
class Op:
    name: str                          # "Relu"
    family: str                        # folder under src/ops
    file: str                          # the definition file (relative), for messages
    header: str                        # "aclnn_relu.h"
    domain: str
    doc: str
    source: str                        # the vendor source it follows
    cparams: list[tuple[str, str]]     # (ctype, name) as written, without the trailing pair
    checks: list[str]
    kernel: str | None
    inputs: list[str] | None           # executor order overrides (parameter names)
    outputs: list[str] | None
    spec: dict[str, object] | None
    fidelity: str
    note: str
    trailing: tuple[str, str] = ("workspaceSize", "executor")   # the header's names of the trailing pair
    exec_name: str | None = None       # the operator the executor runs, when not this one (a V2 form's L0 op)
    launch_status: str | None = None   # phase 2 returns this status for any failure (None: the failure's own)
    extra: list[str] = field(default_factory=list)   # prototypes of plain functions the family's C file exports
    # filled in by the generator
    params: list[Param] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    executor_inputs: list[int] = field(default_factory=list)     # -1: a slot no parameter fills (NULL)
    executor_outputs: list[int] = field(default_factory=list)
    signature: dict | None = None      # the signature registry's entry (registry_to_dict format)

    @property
    def api(self) -> str:
        return f"aclnn{self.name}GetWorkspaceSize"

    @property
    def launch(self) -> str:
        return f"aclnn{self.name}"


@dataclass
class Family:
    name: str
    file: str
    doc: str
    domain: str
    spec_type: str | None
    spec_header: str | None
    spec_functions: dict[str, str]      # spec field -> C function type (declared by the generator)
    includes: list[str]
    lists: dict[str, DtypeList]
    ops: list[Op]
