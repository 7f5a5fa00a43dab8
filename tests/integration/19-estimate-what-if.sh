#!/usr/bin/env bash
# What-if switches applied in the capture (issue 30, part 3): `xmem estimate --what-if
# amp=bf16 | checkpoint=all-blocks | optimizer=fused` profiles the job again with the change
# applied inside it, and the what-if's peak equals, byte for byte, the estimate of the same
# script edited to make that change. Both captures (fast, what --sweep uses, and exact) run
# the attention workload; the Hugging Face one (built from its config) runs in fast mode.
# A change that cannot be applied faithfully to the script is refused with one line, exit 2.
# Checked to fail without the switches' application (what_if.install returning at once).
source "$(dirname "$0")/90-fast-torch2-common.bash"
set +e # its errexit would end the test at the first refusal `run` records
export PATH="$VENV/bin:$PATH"
B=$XMEM_BUILD/bin
cd "$TMP"

# The attention workload trains under `torch.autocast("cuda", dtype=fp32, enabled=False)`
# (its --amp switch, off) and a disabled GradScaler. Its twins: that line edited to bf16
# autocast, and removed (the forward and loss run bare).
line='with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):'
sed "s/$line/with torch.autocast(\"cuda\", dtype=torch.bfloat16):/" \
    "$WORKLOADS/attention.py" >attention_bf16.py
sed "s/$line/if True:/" "$WORKLOADS/attention.py" >attention_bare.py
cp "$WORKLOADS/attention.py" attention.py
grep -q 'autocast("cuda", dtype=torch.bfloat16)' attention_bf16.py && grep -q 'if True:' attention_bare.py ||
    fail "the twins of attention.py were not written (its autocast line changed?)"
args=(--seq 512 --hidden 256 --heads 4 --layers 2 --batch 8)

est() { "$B/xmem-estimate" --gpu A100-40GB --json "$@"; }
RUN_TIMEOUT=300 # each run profiles the job twice, the baseline and the change
refusing=("$B/xmem-estimate" --gpu A100-40GB --mode fast) # text: the refusal is the last line

# same_peak WHAT WHATIF_JSON TWIN_JSON: the what-if's peak and limit are the twin's.
same_peak() {
    expect_eq "$(field_of "$2" what_if.0.peak_bytes)" "$(field_of "$3" peak_bytes)" "$1: peak"
    expect_eq "$(field_of "$2" what_if.0.limit_bytes)" "$(field_of "$3" limit_bytes)" "$1: limit"
    pass "$1: peak $(field_of "$3" peak_bytes) B, as the edited script's"
}

# refused WHAT RE: the last run exited 2 with one line naming the change and RE, and the
# estimate added no line after it.
refused() {
    expect_rc 2 "$1"
    local lines
    lines=$(grep -c '^xmem: --what-if ' <<<"$RUN_OUT" || true)
    expect_eq "$lines" 1 "$1: lines naming the change"
    expect_out "^xmem: --what-if [a-z=0-9-]+: $2" "$1"
    tail -n 1 <<<"$RUN_OUT" | grep -q '^xmem: --what-if ' || fail "$1: a line follows the refusal"
    pass "$1: refused in one line: $(grep '^xmem: --what-if ' <<<"$RUN_OUT")"
}

# field_of reads a dotted path; a list index is a key too.
field_of() {
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$1" "$2"
}

# -- amp=bf16 --------------------------------------------------------------------------------
for mode in fast exact; do
    est --mode "$mode" -- python attention_bf16.py "${args[@]}" >"$mode-twin.json" ||
        fail "$mode: the bf16 twin"
    est --mode "$mode" --what-if amp=bf16 -- python attention.py "${args[@]}" >"$mode-switch.json" ||
        fail "$mode: attention.py --what-if amp=bf16"
    same_peak "$mode: amp=bf16 on the script's own autocast switch" "$mode-switch.json" "$mode-twin.json"
    [ "$(field_of "$mode-switch.json" what_if.0.peak_bytes)" -lt "$(field_of "$mode-switch.json" peak_bytes)" ] ||
        fail "$mode: amp=bf16 is not below the fp32 baseline"
    est --mode "$mode" --what-if amp=bf16 -- python attention_bare.py "${args[@]}" >"$mode-bare.json" ||
        fail "$mode: attention_bare.py --what-if amp=bf16"
    same_peak "$mode: amp=bf16 around a forward the script runs bare" "$mode-bare.json" "$mode-twin.json"
done
run "${refusing[@]}" --what-if amp=bf16 -- python attention.py "${args[@]}" --amp bf16
refused "amp=bf16 on a script already under bf16 autocast" \
    "the script already runs under torch.autocast\('cuda', dtype=bfloat16\) at .*attention.py:[0-9]+"

# -- optimizer=fused ---------------------------------------------------------------------------
est --mode fast -- python attention.py "${args[@]}" --optimizer-kind fused >fused-twin.json ||
    fail "the fused twin"
for kind in default foreach; do
    est --mode fast --what-if optimizer=fused -- python attention.py "${args[@]}" \
        --optimizer-kind "$kind" >"fused-$kind.json" || fail "optimizer=fused on $kind AdamW"
    same_peak "optimizer=fused on a $kind AdamW" "fused-$kind.json" fused-twin.json
done
run "${refusing[@]}" --what-if optimizer=fused -- python attention.py "${args[@]}" --optimizer-kind fused
refused "optimizer=fused on a fused AdamW" "the script's AdamW already uses fused=True"
cat >rmsprop.py <<'PY'
import torch
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).cuda()
opt = torch.optim.RMSprop(model.parameters())
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 16, device="cuda")).square().mean().backward()
    opt.step()
PY
run "${refusing[@]}" --what-if optimizer=fused -- python rmsprop.py
refused "optimizer=fused on RMSprop" "torch.optim.rmsprop.RMSprop has no fused variant in torch"

# -- checkpoint=all-blocks ---------------------------------------------------------------------
# GPT-2 small (124 M parameters, shape-only in fast mode) at 4 x 256 tokens: its blocks'
# activations are what checkpointing saves. Its twin calls gradient_checkpointing_enable().
hf=("$WORKLOADS/torch2/hf_lm.py" --arch gpt2 --size full --seq 256 --batch 4 --steps 3)
est --mode fast -- python "${hf[@]}" --checkpointing >ckpt-twin.json || fail "the checkpointing twin"
est --mode fast --what-if checkpoint=all-blocks -- python "${hf[@]}" >ckpt-switch.json ||
    fail "gpt2 --what-if checkpoint=all-blocks"
same_peak "checkpoint=all-blocks on GPT-2" ckpt-switch.json ckpt-twin.json
[ "$(field_of ckpt-switch.json what_if.0.peak_bytes)" -lt "$(field_of ckpt-switch.json peak_bytes)" ] ||
    fail "checkpoint=all-blocks is not below GPT-2's baseline"
# The workload's AMP switch (autocast(enabled=False), GradScaler only for fp16), turned on.
est --mode fast -- python "${hf[@]}" --amp bf16 >hf-amp-twin.json || fail "gpt2 --amp bf16"
est --mode fast --what-if amp=bf16 -- python "${hf[@]}" >hf-amp-switch.json ||
    fail "gpt2 --what-if amp=bf16"
same_peak "amp=bf16 on GPT-2's own AMP switch" hf-amp-switch.json hf-amp-twin.json
# A checkpointed forward recomputed in the backward stops early; the next step's forward
# must still run under autocast (the capture forgets the recomputation's modules).
llama=("$WORKLOADS/torch2/hf_lm.py" --arch llama --checkpointing --seq 128 --batch 4 --steps 3)
est --mode fast -- python "${llama[@]}" --amp bf16 >llama-amp-twin.json || fail "llama --amp bf16"
est --mode fast --what-if amp=bf16 -- python "${llama[@]}" >llama-amp-switch.json ||
    fail "llama --what-if amp=bf16"
same_peak "amp=bf16 on a checkpointed Llama" llama-amp-switch.json llama-amp-twin.json
run "${refusing[@]}" --what-if checkpoint=all-blocks -- python "${hf[@]}" --checkpointing
refused "checkpoint=all-blocks on a model that checkpoints" \
    "the script already enables gradient checkpointing on its GPT2LMHeadModel"
run "${refusing[@]}" --what-if checkpoint=all-blocks -- python attention.py "${args[@]}"
refused "checkpoint=all-blocks with no Hugging Face model" "no Hugging Face model"

# -- refused before anything runs ----------------------------------------------------------------
run "$B/xmem-estimate" --what-if amp=fp16 -- python attention.py
refused "amp=fp16" "fp16 needs a GradScaler"
run "$B/xmem-estimate" --trace-in "$TMP/none.xtrace" --what-if optimizer=fused
refused "a capture change on a trace" "profiles the job again with the change applied"
finish
