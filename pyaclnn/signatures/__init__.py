"""The package's one C header parser: the signature registry of aclnn operators, parsed from
``aclnnop/*.h`` headers, and the whole C API of a header tree (:mod:`.declarations`: prototypes,
integer constants, typedefs, enums), from which pyaclnn.capi's tables are generated (:mod:`.capi_mirror`).

For each operator: the ordered parameters of ``aclnnXxxGetWorkspaceSize`` with their C type, kind
(tensor, scalar, int array, double, string ...), role (in/out/inout) and optionality, so that a
generic launcher can marshal Python arguments for any operator a toolkit declares.

>>> from pyaclnn.signatures import registry
>>> sig = registry()["aclnnAmpUpdateScale"]
>>> [p.name for p in sig.outputs]
['updatedScaleOut', 'updatedGrowthTrackerOut']
"""

from .cli import main
from .ctypes_map import LAUNCH_ARGTYPES, ctypes_type, workspace_argtypes
from .model import Kind, OpSignature, Param, Role, registry_from_dict, registry_to_dict
from .parser import parse_dir, parse_header_text, scan_dir
from .catalog import builtin, parse_dir_cached, registry, toolkit_include_dirs
from .declarations import Declarations, facts, read_tree

__all__ = [
    "Kind", "Role", "Param", "OpSignature", "parse_header_text", "parse_dir", "scan_dir",
    "registry", "builtin", "toolkit_include_dirs", "parse_dir_cached",
    "registry_to_dict", "registry_from_dict", "main",
    "ctypes_type", "workspace_argtypes", "LAUNCH_ARGTYPES", "Declarations", "read_tree", "facts",
]
