"""Iteration, phase and module attribution, and stopping after N steps.

Iteration n starts when the training loop first shows itself (a DataLoader batch, a forward
with gradients on, zero_grad, backward or step) and ends when step n ends (below);
docs/trace-format.md. Phases: data (DataLoader fetch and the batch's .cuda()), forward (from
the outermost module call), backward (torch.autograd.backward/grad), optimizer (step),
zero_grad (Optimizer/Module.zero_grad), other (between, e.g. the LR scheduler).

What ends a step (`step_rule`, written to the trace's metadata), first that applies:
* `marker`: the script calls torch.cuda.nvtx.mark("xmem.step") after each update (harmless
  on a GPU); from the first marker on, only markers count;
* `optimizer`: a torch.optim optimizer's step() returns;
* `backward`: no torch.optim optimizer was built when the outermost backward returned (a
  loop that updates parameters by hand, `p.data.add_(p.grad, alpha=-lr)`): the step ends when
  the next training-loop event starts (batch, forward with gradients, zero_grad, backward),
  or when the script ends; what runs in between is the `optimizer` phase.
"""
import functools
import inspect
import types
import weakref

import torch
import xmem_patches as patches

from . import devices
from .kernels import KernelRecorder

STEP_MARKER = "xmem.step"


class Tracker:
    def __init__(self, native, steps, on_step, on_last_step):
        self.native = native
        self.steps = steps
        self.iteration = 0
        self.steps_done = 0
        self.on_step = on_step
        self.on_last_step = on_last_step
        self.zero_grad_set_to_none = None
        self.step_rule = "optimizer"
        self.optimizers_built = 0
        self._update_pending = False  # backward rule: a backward returned, its step is open
        self._backward_depth = 0  # reentrant checkpointing runs backward inside backward
        self._module_stack = []
        self._names = weakref.WeakKeyDictionary()  # module -> (interned path id, path)
        self._kernels = KernelRecorder(native)
        # --what-if switches (what_if.py): told of each phase change before it is recorded,
        # of each training root forward (outermost, gradients on) before it runs, and of
        # each finished step.
        self.observers = []

    # -- iterations and phases -------------------------------------------------------------
    def begin_training(self):
        if self.iteration == 0:
            self.iteration = 1
            self.native.iteration(1)

    def loop_event(self):
        """A training-loop event starts: under the backward rule it closes the open step."""
        if self._update_pending and self._backward_depth == 0:
            self._update_pending = False
            self.step_finished()
        self.begin_training()

    def backward_returned(self):
        """The outermost backward returned: with no torch.optim optimizer, what follows is the
        script's own update (the optimizer phase), and under the backward rule the step stays
        open until the next loop event."""
        if self.optimizers_built:
            return
        self.phase("optimizer")
        if self.step_rule != "marker":
            self.step_rule = "backward"
            self._update_pending = True

    def marker(self):
        """torch.cuda.nvtx.mark("xmem.step"): the script says a step ended here."""
        self.step_rule = "marker"
        self._update_pending = False
        self.begin_training()
        self.step_finished()

    def close_open_step(self):
        """The script ended: an update after the last backward completes a step."""
        if self._update_pending:
            self._update_pending = False
            self.steps_done += 1
            # The launcher counts the steps it is told of: a script whose only step ends
            # with it would otherwise be "exited without an optimizer step".
            self.on_step(self.steps_done)

    def phase(self, name):
        for o in self.observers:
            o.phase(name)
        self.native.phase(name)

    def step_finished(self):
        self.steps_done += 1
        for o in self.observers:
            o.step_finished(self.steps_done)
        self.on_step(self.steps_done)
        if self.steps_done >= self.steps:
            self.on_last_step()
            return
        self.iteration += 1
        self.native.iteration(self.iteration)
        self.phase("other")

    # -- modules ---------------------------------------------------------------------------
    def in_forward(self):
        """Whether a module's forward is running."""
        return bool(self._module_stack)

    def in_backward(self):
        """Whether a backward is running (a checkpointed forward recomputed in it, say)."""
        return self._backward_depth > 0

    def _name(self, module):
        """(interned id, path) of a module."""
        named = self._names.get(module)
        if named is None:
            # A module seen first outside any parent forward is a root: name its whole tree.
            parent = self._module_stack[-1][0] if self._module_stack else None
            if parent is None:
                for name, sub in module.named_modules():
                    if sub not in self._names:
                        self._intern(sub, name or type(module).__name__)
            named = self._names.get(module) or self._intern(module, type(module).__name__)
        return named

    def _intern(self, module, path):
        self._names[module] = (self.native.intern(path), path)
        return self._names[module]

    def forward_pre_hook(self, module, inputs):
        if not self._module_stack:
            training = torch.is_grad_enabled()
            if training:
                self.loop_event()
            self.phase("forward" if self.iteration > 0 else "setup")
            if training:
                for o in self.observers:
                    o.training_forward(module)
        nid, path = self._name(module)
        self._module_stack.append((module, nid))
        self.native.set_module(nid)
        self._kernels.on_forward(path, module, inputs)

    def forward_hook(self, module, inputs, output):
        if self._module_stack and self._module_stack[-1][0] is module:
            self._module_stack.pop()
        self.native.set_module(self._module_stack[-1][1] if self._module_stack else 0)

    def install(self, torch_mod):
        mm = torch_mod.nn.modules.module
        mm.register_module_forward_pre_hook(self.forward_pre_hook)
        mm.register_module_forward_hook(self.forward_hook)
        self._wrap_backward(torch_mod)
        self._wrap_zero_grad(torch_mod)
        self._wrap_optimizer_init(torch_mod)
        self._wrap_dataloader(torch_mod)
        self._wrap_marker(torch_mod)

    # -- training-loop entry points ----------------------------------------------------------
    def _wrap_backward(self, torch_mod):
        tracker = self
        for name in ("backward", "grad"):
            original = getattr(torch_mod.autograd, name)

            @functools.wraps(original)
            def wrapper(*args, __original=original, **kwargs):
                tracker.loop_event()
                tracker.phase("backward")
                tracker._module_stack.clear()  # a forward that raised never popped
                tracker.native.set_module(0)
                tracker._backward_depth += 1
                try:
                    result = __original(*args, **kwargs)
                finally:
                    tracker._backward_depth -= 1
                if tracker._backward_depth == 0:
                    # A checkpointed forward recomputed in it stops early, by raising: its
                    # modules never popped, and would hide the next step's forward.
                    tracker._module_stack.clear()
                    tracker.native.set_module(0)
                    tracker.backward_returned()
                return result

            patches.replace("torch.autograd." + name, wrapper)

    def _wrap_zero_grad(self, torch_mod):
        tracker = self
        default = inspect.signature(torch_mod.optim.Optimizer.zero_grad).parameters["set_to_none"].default

        def wrap(original):
            @functools.wraps(original)
            def zero_grad(self, *args, **kwargs):
                if tracker.zero_grad_set_to_none is None:
                    tracker.zero_grad_set_to_none = bool(kwargs.get("set_to_none", args[0] if args else default))
                tracker.loop_event()
                tracker.phase("zero_grad")
                try:
                    return original(self, *args, **kwargs)
                finally:
                    tracker.phase("other")
            return zero_grad

        patches.replace("torch.optim.Optimizer.zero_grad", wrap(torch_mod.optim.Optimizer.zero_grad))
        patches.replace("torch.nn.Module.zero_grad", wrap(torch_mod.nn.Module.zero_grad))

    def _wrap_optimizer_init(self, torch_mod):
        """Wraps each optimizer's step as a bound method of the instance: LR schedulers
        re-wrap `optimizer.step` and need its __self__/__func__."""
        tracker = self
        original_init = torch_mod.optim.Optimizer.__init__

        @functools.wraps(original_init)
        def __init__(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            tracker.optimizers_built += 1
            if "step" in self.__dict__:
                return

            def step(opt, *a, **k):
                if tracker.step_rule == "marker":
                    return type(opt).step(opt, *a, **k)
                tracker.loop_event()
                tracker.phase("optimizer")
                out = type(opt).step(opt, *a, **k)
                tracker.step_finished()
                return out

            self.step = types.MethodType(step, self)

        patches.replace("torch.optim.Optimizer.__init__", __init__)

    def _wrap_dataloader(self, torch_mod):
        tracker = self
        base = torch_mod.utils.data.dataloader._BaseDataLoaderIter
        original = base.__next__

        @functools.wraps(original)
        def __next__(self):
            tracker.loop_event()
            tracker.phase("data")
            with devices.host_scope():
                return original(self)

        patches.replace("torch.utils.data.dataloader._BaseDataLoaderIter.__next__", __next__)

    def _wrap_marker(self, torch_mod):
        """torch.cuda.nvtx.mark("xmem.step") ends a step; other marks stay no-ops."""
        nvtx = getattr(torch_mod.cuda, "nvtx", None)
        if nvtx is None:
            return
        tracker = self

        def mark(msg, *args, **kwargs):
            if msg == STEP_MARKER:
                tracker.marker()

        patches.replace("torch.cuda.nvtx.mark", mark)
