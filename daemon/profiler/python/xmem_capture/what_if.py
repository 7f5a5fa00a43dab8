"""--what-if switches, applied inside the job (`xmem-profile --what-if CHANGE`, which
`xmem estimate --what-if` runs; docs/estimate.md, "What if"). Each runs the job as if its
script had been edited so, and refuses a job it cannot change faithfully: one line
`xmem: --what-if CHANGE: WHY`, status line `refused`, exit status 8 (REFUSED).

* amp=bf16: each training step's forward runs under torch.autocast("cuda",
  dtype=torch.bfloat16), as if the script had written `with torch.autocast(...):` around
  its forward and loss: from the outermost module call with gradients on (before it runs)
  to the step's next phase (its backward, usually). A CUDA autocast the script builds that
  casts nothing (`enabled=False`, or float32: the script's AMP switch left off), outside
  any forward and any autocast, runs in bf16 instead, as if the switch were on; one inside
  a forward or an autocast region is the script turning autocast off there, and stays.
  Refused: an autocast of the script's that casts (it already uses AMP). A GradScaler the
  script builds runs as written (bf16 needs none).
* checkpoint=all-blocks: each Hugging Face model (a module with
  gradient_checkpointing_enable) in a training forward gets it called, before its first
  training forward, as if the script had called it after building the model: every block
  recomputes its forward in the backward (torch.utils.checkpoint, as transformers sets it
  up). Refused: a model that already checkpoints, or does not support it; no such model
  in the first step.
* optimizer=fused: torch.optim Adam, AdamW and SGD get fused=True (foreach dropped), as if
  the script had passed it. Refused: any other optimizer (no fused CUDA kernel), one
  already fused, or no torch.optim optimizer in the first step.

Both captures install it (bootstrap.track_steps), after their autocast and before the
script runs; a Tracker (phases.py) tells each switch of phases, training forwards and steps.
"""
import inspect
import os

import xmem_patches as patches
import xmem_profile_status as profile_status

from . import amp, autocast_state, script_frame

ENV = "XMEM_WHAT_IF"  # set by xmem-profile --what-if; empty: none


def install(session, tracker, torch):
    change = os.environ.pop(ENV, "")
    if not change:
        return

    def refuse(why):
        session.fail(f"xmem: --what-if {change}: {why}", profile_status.LINE_REFUSED)

    switch = SWITCHES.get(change)
    if switch is None:
        refuse("unknown change (known: " + ", ".join(SWITCHES) + ")")
    tracker.observers.append(switch(torch, tracker, refuse))
    session.native.meta("what_if", change)


class Switch:
    """What a switch hears from the Tracker. `applied`: the change took part in the job; a
    first step that ends without it is refused with NOT_APPLIED."""
    not_applied = ""

    def __init__(self, torch, tracker, refuse):
        self.torch, self.tracker, self.refuse = torch, tracker, refuse
        self.applied = False

    def phase(self, name):
        pass

    def training_forward(self, module):
        pass

    def step_finished(self, n):
        if n == 1 and not self.applied:
            self.refuse(self.not_applied)

    def where(self):
        return script_frame.where(self.torch, *self.own_dirs())

    @staticmethod
    def own_dirs():
        """Fast mode's Python directory (the exact capture's is script_frame's own)."""
        return (os.environ.get("XMEM_PROFILER_PYDIR"),)


class AutocastForward(Switch):
    """amp=bf16 (above)."""
    not_applied = ("no module was called with gradients on in the first step, so no training "
                   "forward to run under autocast")

    def __init__(self, torch, tracker, refuse):
        super().__init__(torch, tracker, refuse)
        self.region = None  # the autocast this switch entered, until the forward ends
        self.building = False
        amp.script_autocast = self.script_autocast

    def script_autocast(self, dtype, enabled):
        # torch's own autocasts (checkpoint's recomputation repeats the forward's) are as
        # the forward was; the script's reach here through torch's autocast classes.
        if self.building or script_frame.torch_called(self.torch, *self.own_dirs(),
                                                      passing=("autocast_mode.py",)):
            return dtype, enabled
        if amp.cuda_autocast_casts(dtype, enabled):
            name = str(dtype or self.torch.float16).replace("torch.", "")
            self.refuse(f"the script already runs under torch.autocast('cuda', dtype={name})"
                        f"{self.where()}; estimate it as it is")
        if self.tracker.in_forward() or self.cuda_autocast_on():
            return dtype, enabled
        return self.torch.bfloat16, True

    def cuda_autocast_on(self):
        return amp.cuda_autocast_dtype() is not None or autocast_state.enabled("cuda")

    def training_forward(self, module):
        if self.cuda_autocast_on():  # the script's own switch, turned on above
            self.applied = True
            return
        if self.tracker.in_backward():  # a recomputation runs as its forward ran
            return
        self.building = True
        try:
            self.region = self.torch.autocast("cuda", dtype=self.torch.bfloat16)
        finally:
            self.building = False
        self.region.__enter__()
        self.applied = True

    def phase(self, name):
        if name != "forward" and self.region is not None:
            region, self.region = self.region, None
            region.__exit__(None, None, None)


class CheckpointBlocks(Switch):
    """checkpoint=all-blocks (above)."""
    not_applied = ("no Hugging Face model (a module with gradient_checkpointing_enable) took "
                   "part in the first step's forward; checkpoint=all-blocks applies to those")

    def __init__(self, torch, tracker, refuse):
        super().__init__(torch, tracker, refuse)
        self.seen = set()  # ids of the roots looked at, and of every module they hold

    def training_forward(self, root):
        if id(root) in self.seen:
            return
        covered = set()
        for m in root.modules():
            if id(m) in covered or not hasattr(m, "gradient_checkpointing_enable"):
                continue
            self.enable(m)
            covered.update(id(sub) for sub in m.modules())
        self.seen.update(id(m) for m in root.modules())

    def enable(self, model):
        kind = type(model).__name__
        if any(getattr(m, "gradient_checkpointing", False) is True for m in model.modules()):
            self.refuse(f"the script already enables gradient checkpointing on its {kind}; "
                        "estimate it as it is")
        if getattr(model, "supports_gradient_checkpointing", True) is False:
            self.refuse(f"{kind} does not support gradient checkpointing")
        # transformers 5 renamed it; the old name is a deprecated alias of the same thing.
        enable = getattr(model, "activation_checkpointing_enable", None)
        (enable or model.gradient_checkpointing_enable)()
        self.applied = True


class FusedOptimizers(Switch):
    """optimizer=fused (above)."""
    FUSED = ("Adam", "AdamW", "SGD")  # torch.optim classes with a fused CUDA kernel
    not_applied = ("the script built no torch.optim optimizer before its first step ended; "
                   "optimizer=fused applies to Adam, AdamW and SGD")

    def __init__(self, torch, tracker, refuse):
        super().__init__(torch, tracker, refuse)
        self.building = False  # inside the script's optimizer's __init__, fused=True given
        for name in self.FUSED:
            cls = getattr(torch.optim, name, None)
            if cls is not None and "fused" in inspect.signature(cls.__init__).parameters:
                patches.replace(f"torch.optim.{name}.__init__", self.fused_init(cls.__init__, name))
        self.check_built(torch.optim.Optimizer)

    def fused_init(self, original, name):
        switch = self

        def __init__(self, *args, **kwargs):
            if switch.building:  # AdamW's __init__ calls Adam's: the script asked once
                return original(self, *args, **kwargs)
            if kwargs.get("fused"):
                switch.refuse(f"the script's {name} already uses fused=True{switch.where()}; "
                              "estimate it as it is")
            kwargs.pop("foreach", None)  # fused and foreach cannot both be on
            kwargs["fused"] = True
            switch.building = True
            try:
                return original(self, *args, **kwargs)
            finally:
                switch.building = False

        return __init__

    def check_built(self, optimizer):
        """Every optimizer the script builds is fused, or the change is refused."""
        switch = self
        original = optimizer.__init__

        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            if not self.defaults.get("fused"):
                kind = type(self).__module__ + "." + type(self).__qualname__
                switch.refuse(f"{kind} has no fused variant in torch {switch.torch.__version__} "
                              f"(fused: {', '.join(switch.FUSED)}){switch.where()}")
            switch.applied = True

        patches.replace("torch.optim.Optimizer.__init__", __init__)


SWITCHES = {
    "amp=bf16": AutocastForward,
    "checkpoint=all-blocks": CheckpointBlocks,
    "optimizer=fused": FusedOptimizers,
}
