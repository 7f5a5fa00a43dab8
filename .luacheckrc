-- luacheck's settings for xmem's Lua (`make format-check`): Slurm 22.05 runs it as Lua 5.1.
std = "lua51"
max_line_length = 120
-- slurmctld provides `slurm`; the hooks are globals it calls. The tests stand in for
-- slurmctld, so they set `slurm` and call the hooks.
globals = { "slurm", "slurm_job_submit", "slurm_job_modify",
            "slurm_cli_setup_defaults", "slurm_cli_pre_submit", "slurm_cli_post_submit" }
-- Slurm's hooks have fixed signatures: an argument a hook does not need is still there.
unused_args = false
-- The tests' rows of expected values read better whole than wrapped.
files["tests/unit/plugin/*.lua"] = { max_line_length = false }
