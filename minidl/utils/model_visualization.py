"""model_to_dot and plot_model: a model's layer graph through pydot and Graphviz, as in Keras.

pydot (`pip install pydot`) builds the graph; Graphviz's `dot` program (e.g. `apt-get install
graphviz`) renders it to an image. model_to_dot needs only pydot; plot_model needs both, and
says which is missing. The image is written through atomic_write, so a failed render never
replaces an existing file with half of one.
"""

import html
import os

from ..io import atomic_write
from ..layers.base import format_shape
from ..layers.input_layer import InputLayer
from .. import activations

_PYDOT_MISSING = "You must install pydot (`pip install pydot`) for {} to work."
_GRAPHVIZ_MISSING = ("You must install Graphviz, whose `dot` program renders the graph "
                     "(`apt-get install graphviz`, `brew install graphviz`, or see "
                     "https://graphviz.org/download/), for plot_model to work.")


def _pydot(what):
    try:
        import pydot
    except ImportError:
        raise ImportError(_PYDOT_MISSING.format(what)) from None
    return pydot


def _check_built(model, what):
    if getattr(model, "graph", None) is None:
        raise ValueError(f"{what}: {model.describe()} has not yet been built. Build it first "
                         "by calling build(input_shape), or fit() or predict() on data, or "
                         "start it with layers.Input(shape)")


def _label(layer, show_shapes, show_dtype, show_layer_names, show_layer_activations,
           show_trainable):
    """An HTML-like Graphviz label: a title row, then one row of the requested details."""
    cls = type(layer).__name__
    title = f"<b>{html.escape(layer.name)}</b> ({cls})" if show_layer_names else f"<b>{cls}</b>"
    cells = []
    if show_shapes:
        if not isinstance(layer, InputLayer):
            shape = (f"[{', '.join(format_shape(s) for s in layer.input_shape)}]"
                     if layer.multiple_inputs else format_shape(layer.input_shape))
            cells.append(("white", f"Input shape: <b>{shape}</b>"))
        cells.append(("white", f"Output shape: <b>{format_shape(layer.output_shape)}</b>"))
    if show_dtype:
        cells.append(("white", "Output dtype: <b>float32</b>"))
    if show_trainable and layer.weights:
        cells.append(("forestgreen", "<b>Trainable</b>") if layer.trainable
                     else ("firebrick", "<b>Non-trainable</b>"))
    span = max(1, len(cells))
    rows = [f'<tr><td colspan="{span}" bgcolor="black"><font point-size="16" color="white">'
            f"{title}</font></td></tr>"]
    activation = activations.fused_name(layer, None)
    if show_layer_activations and isinstance(activation, str):
        rows.append(f'<tr><td colspan="{span}" bgcolor="white"><font point-size="14">'
                    f"Activation: <b>{activation}</b></font></td></tr>")
    if cells:
        # Text is black on white cells, white on the coloured trainable marker.
        rows.append("<tr>" + "".join(
            f'<td bgcolor="{bg}"><font point-size="14" '
            f'color="{"black" if bg == "white" else "white"}">{text}</font></td>'
            for bg, text in cells) + "</tr>")
    return ('<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
            + "".join(rows) + "</table>>")


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=200, subgraph=False,
                 show_layer_activations=False, show_trainable=False, splines="ortho"):
    """A pydot.Dot of the model: one node per layer, an edge per connection. A Sequential
    shows its layers without the input layer, a functional Model its whole graph (as Keras).
    minidl models do not nest, so `expand_nested` changes nothing."""
    _check_built(model, "model_to_dot")
    pydot = _pydot("model_to_dot")
    if rankdir not in ("TB", "LR"):
        raise ValueError(f"model_to_dot: rankdir must be 'TB' or 'LR', got {rankdir!r}")
    if subgraph:
        dot = pydot.Cluster(graph_name=node_id(model), style="dashed",
                            label=f"<{html.escape(model.name)}>", labeljust="l")
    else:
        dot = pydot.Dot(graph_type="digraph", rankdir=rankdir, concentrate=True, dpi=dpi,
                        splines=splines)
        dot.set_node_defaults(shape="record")
    sequential = type(model).__name__ == "Sequential"
    layers = model.layers if sequential else model.graph.layers
    # Nodes are named by id(layer), as Keras names them: a layer name is free text, and as a
    # DOT id a quote would end it, "a:b" would be port b of node a, a trailing backslash would
    # escape the closing quote. The name appears only in the (escaped) label.
    for layer in layers:
        dot.add_node(pydot.Node(node_id(layer), fontname="Helvetica", border="0", margin="0",
                                label=_label(layer, show_shapes, show_dtype, show_layer_names,
                                             show_layer_activations, show_trainable)))
    shown = {id(layer) for layer in layers}
    for layer in layers:
        for tensor in layer.inbound:
            if id(tensor.producer) in shown:   # a nested model's output: the model
                dot.add_edge(pydot.Edge(node_id(tensor.producer), node_id(layer), penwidth="2"))
    return dot


def node_id(layer):
    """The DOT node id of `layer` in model_to_dot's graph (Keras's: str(id(layer)))."""
    return str(id(layer))


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=False, rankdir="TB", expand_nested=False, dpi=200,
               show_layer_activations=False, show_trainable=False, splines="ortho"):
    """Render model_to_dot(model, ...) to `to_file`; its extension (.png, .pdf, .svg, .dot,
    ...) chooses the format, png when it has none. Returns an IPython Image inside Jupyter
    (when IPython is installed), else None."""
    _check_built(model, "plot_model")
    _pydot("plot_model")
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype,
                       show_layer_names=show_layer_names, rankdir=rankdir,
                       expand_nested=expand_nested, dpi=dpi,
                       show_layer_activations=show_layer_activations,
                       show_trainable=show_trainable, splines=splines)
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    try:
        image = dot.create(format=extension)
    except FileNotFoundError:  # pydot's way of saying Graphviz's `dot` is not on PATH
        raise ImportError(_GRAPHVIZ_MISSING) from None
    with atomic_write(to_file, "wb") as f:
        f.write(image)
    if extension != "pdf":
        try:
            from IPython import display, get_ipython
        except ImportError:
            return None
        if get_ipython() is not None:
            return display.Image(filename=to_file)
    return None


__all__ = ["model_to_dot", "node_id", "plot_model"]
