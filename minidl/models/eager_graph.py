"""A functional model called on minidl.ops Tensors (inside a subclassed model's call, a custom
layer's call or a train_step): each node's layer is called on Tensors in the graph's order,
so built-in layers run their fused kernels and record their backward on the tape that
records (layers/custom_call.py), exactly as when a custom layer calls them."""

from . import structure


def call_graph_on_tensors(graph, inputs, training, owner):
    """The graph's outputs (in its output structure) for `inputs` (Tensors, in its input
    structure); a node's own training= wins over the call's."""
    tensors = structure.flatten_data(inputs, graph.input_names, "inputs", owner)
    if len(tensors) != len(graph.inputs):
        raise ValueError(f"{owner} takes {len(graph.inputs)} inputs, got {len(tensors)}")
    values = {id(t): x for t, x in zip(graph.inputs, tensors)}
    for node in graph.nodes:
        ins = [values[id(t)] for t in node.inputs]
        mode = training if node.training is None else node.training
        result = node.layer(ins if node.structured else ins[0], training=mode)
        if node.several:   # a layer of several outputs (a custom call returning two)
            values.update(zip(map(id, node.outputs), result))
        else:
            values[id(node.outputs[0])] = result
    outputs = [values[id(t)] for t in graph.outputs]
    return graph.pack_outputs(outputs)
