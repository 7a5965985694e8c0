"""tocha.fx: symbolic tracing, graphs and graph transforms, with the API of ``torch.fx``.

``symbolic_trace(module)`` records a module's forward as a `Graph` of `Node`s inside a
`GraphModule`, whose ``code`` is readable Python generated from the graph; `Interpreter` and
`Transformer` run and rewrite graphs; ``subgraph_rewriter.replace_pattern`` and the
``passes`` package hold ready-made transforms.
"""

from . import immutable_collections, passes, subgraph_rewriter  # noqa: F401
from ._symbolic_trace import PH, Tracer, is_fx_tracing, symbolic_trace, wrap
from ._version import __version__  # noqa: F401
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_aggregate, map_arg
from .proxy import Proxy, TraceError
from .subgraph_rewriter import replace_pattern

__all__ = [
    "PH",
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "Proxy",
    "TraceError",
    "Tracer",
    "Transformer",
    "has_side_effect",
    "is_fx_tracing",
    "map_aggregate",
    "map_arg",
    "replace_pattern",
    "subgraph_rewriter",
    "symbolic_trace",
    "wrap",
]
