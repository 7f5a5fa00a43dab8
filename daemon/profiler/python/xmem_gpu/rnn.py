"""nn.LSTM, nn.GRU and nn.RNN on a GPU, for both captures: one definition of what they run.

A GPU runs them with cuDNN (`_cudnn_rnn`, aten/src/ATen/native/cudnn/RNN.cpp). For backward
it keeps the output, the last hidden (and cell) state and cuDNN's reserve buffer, and it takes
a workspace while it runs; cuDNN sizes both at run time (cudnnGetRNNTempSpaceSizes) and torch
shows neither (its own Meta kernel returns an empty reserve). Neither capture can run cuDNN,
so both run step-by-step cells, whose saved gate activations stand for what the reserve holds.

Which cells matters. ATen's `lstm`/`gru`/`rnn_*` (aten/src/ATen/native/RNN.cpp, `FullLayer`)
chooses by device: on a CPU tensor it multiplies a layer's whole input sequence by W_ih once
and each step adds W_hh·h to its slice; on any other tensor (a fast-mode meta tensor) each
step makes its own two products. The same script then allocated twice the `mm`s in fast mode
(280 against 144 a step on a two-layer LSTM over 35 steps) and a different pool (issue 33).
cuDNN also multiplies a layer's inputs for all steps at once before its recurrence, so the
CPU's order is the one kept: `layers` below is that loop, written once in torch ops, and both
captures call it, so they record the same tensors in the same order. Between layers a GPU's
`dropout` is native_dropout (xmem_gpu/dropout.py): the layer stack calls F.dropout, which
each capture routes to that rule. Packed sequences and projections (proj_size) keep ATen's own
loop. The exact capture also keeps oneDNN out of the call: oneDNN's CPU LSTM keeps a workspace
of its own layout, about four times those activations (docs/capture.md, "Recurrent layers").
Not checked on a GPU, so the estimate carries a warning.
"""
import torch

FUNCTIONS = ("lstm", "gru", "rnn_tanh", "rnn_relu")
WARNING_KEY = "warning_rnn"
WARNING = ("nn.LSTM/GRU/RNN were estimated with ATen's step-by-step cells; a GPU runs them "
           "with cuDNN, whose reserve buffer xmem has not measured, so their share of the "
           "estimate is unverified")


def functions(torch):
    """The torch functions recurrent modules call (`torch._VF.lstm` is `torch.lstm`)."""
    variable_functions = torch._C._VariableFunctions
    return [getattr(variable_functions, name) for name in FUNCTIONS
            if hasattr(variable_functions, name)]


class WarnOnce:
    """Writes the warning once, the first time a recurrent layer runs on the device."""

    def __init__(self, note):
        self._note = note
        self._written = False

    def on_device_call(self):
        if not self._written:
            self._written = True
            self._note(WARNING_KEY, WARNING)


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _lstm_cell(projected, hidden, w_hh, b_hh):
    """ATen's CPU LSTMCell with the input already multiplied: (h, c) of one step."""
    h, c = hidden
    gates = torch._C._nn.linear(h, w_hh, b_hh).add_(projected)
    ingate, forgetgate, cellgate, outgate = gates.unsafe_chunk(4, 1)
    ingate, forgetgate = ingate.sigmoid_(), forgetgate.sigmoid_()
    cellgate, outgate = cellgate.tanh_(), outgate.sigmoid_()
    c = (forgetgate * c).add_(ingate * cellgate)
    return outgate * c.tanh(), c


def _gru_cell(projected, h, w_hh, b_hh):
    """ATen's CPU GRUCell with the input already multiplied: h of one step."""
    igates = projected.unsafe_chunk(3, 1)
    hgates = torch._C._nn.linear(h, w_hh, b_hh).unsafe_chunk(3, 1)
    reset = hgates[0].add_(igates[0]).sigmoid_()
    update = hgates[1].add_(igates[1]).sigmoid_()
    new = igates[2].add(hgates[2].mul_(reset)).tanh_()
    return (h - new).mul_(update).add_(new)


def _simple_cell(nonlinearity):
    def cell(projected, h, w_hh, b_hh):
        return nonlinearity(torch._C._nn.linear(h, w_hh, b_hh).add_(projected))
    return cell


_CELLS = {"lstm": _lstm_cell, "gru": _gru_cell, "rnn_tanh": _simple_cell(torch.tanh),
          "rnn_relu": _simple_cell(torch.relu)}


def _direction(kind, inputs, hidden, weights, reverse):
    """One layer in one direction, as ATen's CPU FullLayer: (outputs [T, B, H], last hidden)."""
    w_ih, w_hh, b_ih, b_hh = weights
    steps = torch._C._nn.linear(inputs, w_ih, b_ih).unbind(0)
    outputs = []
    for projected in (reversed(steps) if reverse else steps):
        hidden = _CELLS[kind](projected, hidden, w_hh, b_hh)
        outputs.append(hidden[0] if kind == "lstm" else hidden)
    if reverse:
        outputs.reverse()
    return torch.stack(outputs, 0), hidden


def _weights(params, has_biases, index):
    per = 4 if has_biases else 2
    w = params[index * per:(index + 1) * per]
    return (w[0], w[1], w[2], w[3]) if has_biases else (w[0], w[1], None, None)


def layers(kind, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first):
    """`torch.<kind>(input, hx, params, ...)` (the unpacked form) as both captures run it:
    ATen's CPU layer stack (see the module's comment). Returns what torch.<kind> returns."""
    directions = 2 if bidirectional else 1
    x = input.transpose(0, 1) if batch_first else input
    if kind == "lstm":
        hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
    else:
        hiddens = list(hx.unbind(0))
    finals = []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            index = layer * directions + d
            out, last = _direction(kind, x, hiddens[index], _weights(params, has_biases, index),
                                   reverse=d == 1)
            outs.append(out)
            finals.append(last)
        x = outs[0] if directions == 1 else torch.cat(outs, outs[0].dim() - 1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = torch.nn.functional.dropout(x, dropout, True)
    if kind == "lstm":
        last = (torch.stack([h for h, _ in finals], 0), torch.stack([c for _, c in finals], 0))
    else:
        last = (torch.stack(finals, 0),)
    return (x.transpose(0, 1) if batch_first else x,) + last


def unpacked_call(kind, args, kwargs):
    """The arguments of `layers` when ARGS is torch.<kind>'s unpacked form without
    projections (the form nn.LSTM/GRU/RNN call for a plain tensor), else None (ATen's own)."""
    if kwargs or len(args) != 9 or not isinstance(args[0], torch.Tensor):
        return None
    input, hx, params, has_biases, num_layers = args[:5]
    if kind == "lstm" and not (isinstance(hx, (list, tuple)) and len(hx) == 2):
        return None
    if kind != "lstm" and not isinstance(hx, torch.Tensor):
        return None
    directions = 2 if args[7] else 1
    if len(params) != num_layers * directions * (4 if has_biases else 2):
        return None  # projections (w_hr) or a form this does not know
    if kind == "lstm" and hx[0].size(-1) != hx[1].size(-1):
        return None
    return (kind,) + tuple(args)


def kind_of(function):
    """'lstm', 'gru', 'rnn_tanh' or 'rnn_relu' for one of `functions(torch)`."""
    return function.__name__
