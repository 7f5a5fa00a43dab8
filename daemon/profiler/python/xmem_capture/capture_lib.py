"""Which libxmem-capture this process loads (docs/capture.md, "A capture library for any torch").

The library wraps c10's CPU allocator and registers a RecordFunction callback: C++ against
one libtorch's headers and ABI. xmem ships one built against the torch it was built with;
a job running any other torch gets its own copy, built on first use inside the job's
interpreter with the system C++ compiler and cached per user under
${XDG_CACHE_HOME:-~/.cache}/xmem/capture/, one file per (torch version, C++ ABI, hash of the
capture sources and flags).

Environment (set by xmem-profile): XMEM_CAPTURE_LIB (the shipped library, or one the user
named), XMEM_CAPTURE_LIB_TORCH ("VERSION ABI" it was built against), XMEM_CAPTURE_SRC and
XMEM_CAPTURE_INCLUDE (the sources and the simulator headers they include; unset when the
user named the library: it is then used as it is).
"""
import atexit
import fcntl
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile

import xmem_profile_status as profile_status

SOURCES = ("capture_api.cpp", "torch_hooks.cpp", "recorder.cpp", "trace_writer.cpp")
# Part of the cache key: changing a flag must not reuse a library built without it.
FLAGS = ("-O2", "-shared", "-fPIC", "-pthread", "-fvisibility=hidden",
         "-fvisibility-inlines-hidden", "-Wno-deprecated-declarations", "-DXMEM_CAPTURE_EXPORTS")
_INCLUDE = re.compile(rb'^\s*#\s*include\s+"([^"]+)"', re.M)


class BuildError(RuntimeError):
    """The library could not be built or cached; the message is one `xmem: ` line."""


def release(version):
    """"1.13.0a0" -> "1.13.0", "2.14.1+cu130" -> "2.14.1": what a build is checked against."""
    match = re.match(r"\d+(\.\d+)*", version)
    return match.group(0) if match else version


def cxx11_abi(torch):
    return int(bool(torch._C._GLIBCXX_USE_CXX11_ABI))


def library_for(torch, say=lambda line: None, env=None):
    """The library path for TORCH. SAY gets the status lines "build TEXT" before a build and
    "built" after it (the launcher stops the step timer in between). Raises BuildError."""
    env = os.environ if env is None else env
    shipped = env.get("XMEM_CAPTURE_LIB", "")
    src = env.get("XMEM_CAPTURE_SRC", "")
    if not src:
        return shipped
    if _fits(shipped, env.get("XMEM_CAPTURE_LIB_TORCH", ""), torch):
        return shipped
    return _cached_build(torch, src, env.get("XMEM_CAPTURE_INCLUDE", ""), say)


def _fits(shipped, built_for, torch):
    parts = built_for.split()
    return (os.path.isfile(shipped) and len(parts) == 2 and
            release(parts[0]) == release(torch.__version__) and parts[1] == str(cxx11_abi(torch)))


def _source_files(src, include):
    """The capture sources and every header they include from xmem (not torch's or the
    system's: those are not under SRC or INCLUDE), as {path: content}."""
    found, todo = {}, [os.path.join(src, name) for name in SOURCES]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        try:
            with open(path, "rb") as f:
                found[path] = f.read()
        except OSError as e:
            raise BuildError(f"xmem: {path}: cannot read the capture sources ({e.strerror}; "
                             "reinstall xmem)") from None
        here = os.path.dirname(path)
        for name in _INCLUDE.findall(found[path]):
            for base in (here, src, include):
                candidate = os.path.join(base, name.decode())
                if base and os.path.isfile(candidate):
                    todo.append(os.path.normpath(candidate))
                    break
    return found


def source_hash(src, include):
    """By file name and content, not path: the build tree's sources and the installed copy
    (share/xmem/capture-src) share a cache entry."""
    h = hashlib.sha256(" ".join(FLAGS).encode())
    named = {os.path.basename(path): text for path, text in _source_files(src, include).items()}
    for name in sorted(named):
        h.update(name.encode() + b"\0" + named[name] + b"\0")
    return h.hexdigest()[:16]


class NoCache(Exception):
    """The per-user cache cannot be created (a user without a writable home, as service
    accounts and some clusters' batch users are); the text says why, in one line."""


def cache_dir():
    """Per user, never shared: a library another user could write would run in this job.
    Returns (path, descriptor): each level below the base is opened relative to the one above
    with O_NOFOLLOW and checked on its descriptor, so a directory swapped after the check is
    never the one used (issue 26, M7)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "xmem", "capture")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise NoCache(f"{path}: {e.strerror}") from None
    try:
        for name, shown in (("xmem", os.path.join(base, "xmem")), ("capture", path)):
            parent, fd = fd, _private_dir(fd, name, shown)
            os.close(parent)
    except BaseException:
        os.close(fd)
        raise
    return path, fd


def _private_dir(parent, name, shown):
    """NAME under the directory PARENT, created 0700, opened without following a link; its
    owner and mode checked on the descriptor, an own group- or world-writable one refused."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:
        pass
    except OSError as e:
        raise NoCache(f"{shown}: {e.strerror}") from None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=parent)
    except OSError as e:
        raise BuildError(f"xmem: {shown}: cannot open the capture cache ({e.strerror}; a "
                         "link is never followed there; remove it, or set XDG_CACHE_HOME)") from None
    _refuse_shared(fd, shown)
    return fd


def _refuse_shared(fd, shown):
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        raise BuildError(f"xmem: {shown}: not yours alone (owned by uid {st.st_uid}, mode "
                         f"{st.st_mode & 0o777:o}); the capture library is not cached "
                         "there (chmod go-w it, or set XDG_CACHE_HOME)")


# What this process loads, by the descriptor it checked: "/proc/self/fd/N" -> the cached
# file's name, which processes the job starts are given instead (their descriptors differ).
_LOADED_BY_FD = {}


def named_path(path):
    """The file name for PATH, which may be the descriptor path _cached_build returned."""
    return _LOADED_BY_FD.get(path, path)


def _cached_build(torch, src, include, say):
    version = torch.__version__
    abi = cxx11_abi(torch)
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", version)
    try:
        directory, dir_fd = cache_dir()
    except NoCache as why:
        return _private_build(torch, src, include, say, why)
    try:
        name = f"libxmem-capture-torch{safe}-abi{abi}-{source_hash(src, include)}.so"
        fd = _open_library(dir_fd, name, directory)
        if fd is None:
            lock_fd = os.open(name + ".lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW |
                              os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
            with os.fdopen(lock_fd, "w") as lock:
                _lock_saying(lock, say, f"{profile_status.LINE_BUILD} xmem: waiting for another "
                             f"process building the capture library for torch {version}")
                fd = _open_library(dir_fd, name, directory)
                if fd is None:
                    _build_into(torch, src, include, dir_fd, name, say,
                                f"building the capture library for torch {version} into "
                                f"{directory} (once per torch version)")
                    fd = _open_library(dir_fd, name, directory)
                say(profile_status.LINE_BUILT)
    finally:
        os.close(dir_fd)
    loaded = f"/proc/self/fd/{fd}"  # the checked file itself, whatever its name is by now
    _LOADED_BY_FD[loaded] = os.path.join(directory, name)
    return loaded


def _open_library(dir_fd, name, directory):
    """A descriptor of the cached library NAME (checked: a regular file of this user's that
    others cannot write), or None when there is none yet. Kept open: dlopen reads it."""
    shown = os.path.join(directory, name)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BuildError(f"xmem: {shown}: cannot open the cached capture library "
                         f"({e.strerror}; remove it)") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BuildError(f"xmem: {shown}: not a regular file (remove it)")
    _refuse_shared(fd, shown)
    return fd


def _build(torch, src, include, target, say, what):
    """Checks the toolchain, says WHAT as the build's status line, compiles into TARGET."""
    _check_toolchain(torch)
    say(profile_status.LINE_BUILD + " xmem: " + what)
    _compile(torch, src, include, target)


def _build_into(torch, src, include, dir_fd, name, say, what):
    """Builds in a directory of this process alone, then copies the library into the cache
    directory DIR_FD under a temporary name and renames it to NAME there: no path is
    resolved again between the checks and the file (no process ever loads half a library)."""
    private = tempfile.mkdtemp(prefix="xmem-capture-build-")
    try:
        built = os.path.join(private, "libxmem-capture.so")
        _build(torch, src, include, built, say, what)
        tmp = f".build-{os.getpid()}.so"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o755, dir_fd=dir_fd)
        try:
            with open(built, "rb") as src_file, os.fdopen(out, "wb") as dst:
                shutil.copyfileobj(src_file, dst)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _lock_saying(lock, say, waiting):
    """Locks LOCK; when another process holds it (building the same library), first says
    WAITING, so the launcher's step timer waits for this process too."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        say(waiting)
        fcntl.flock(lock, fcntl.LOCK_EX)


def _first_error(output):
    lines = [text.strip() for text in output.splitlines() if text.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[-1] if lines else "no output"


def compile_command(torch, src, include, out):
    """The compiler's argv. torch 2.x headers need C++20 (2.14's do); 1.13's want C++17."""
    root = os.path.dirname(torch.__file__)
    lib = os.path.join(root, "lib")
    std = "-std=c++17" if release(torch.__version__).startswith("1.") else "-std=c++20"
    cxx = os.environ.get("CXX") or "c++"
    includes = [src] + ([include] if include else []) + [
        os.path.join(root, "include"), os.path.join(root, "include", "torch", "csrc", "api",
                                                    "include")]
    return ([cxx, std, *FLAGS, f"-D_GLIBCXX_USE_CXX11_ABI={cxx11_abi(torch)}"] +
            [f"-I{d}" for d in includes] + [os.path.join(src, s) for s in SOURCES] +
            ["-o", out, f"-L{lib}", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{lib}"])


def _check_toolchain(torch):
    """A compiler and torch's headers, before anything is said or written."""
    version = torch.__version__
    cxx = compile_command(torch, "", "", "")[0]
    if shutil.which(cxx) is None:
        raise BuildError(f"xmem: cannot build the capture library for torch {version}: no C++ "
                         f"compiler ({cxx} not found; install g++, or set CXX)")
    headers = os.path.join(os.path.dirname(torch.__file__), "include")
    if not os.path.isdir(headers):
        raise BuildError(f"xmem: cannot build the capture library for torch {version}: "
                         f"{headers} is missing (install a torch that ships its C++ headers)")


def _compile(torch, src, include, target):
    version = torch.__version__
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=os.path.dirname(target))
    os.close(fd)
    try:
        argv = compile_command(torch, src, include, tmp)
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise BuildError(f"xmem: building the capture library for torch {version} failed: "
                             f"{_first_error(done.stdout.decode(errors='replace'))} (with "
                             f"{argv[0]} {argv[1]}; set CXX to a compiler that supports it)")
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)  # atomic: no process ever loads half a library
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _private_build(torch, src, include, say, why):
    """No cache: build into a directory of this process alone, removed at exit (the library
    stays mapped), so the profile still runs, at the price of a build each time."""
    directory = tempfile.mkdtemp(prefix="xmem-capture-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    target = os.path.join(directory, "libxmem-capture.so")
    _build(torch, src, include, target, say,
           f"no capture cache ({why}); building the capture library for torch "
           f"{torch.__version__} for this run only (create ~/.cache or set XDG_CACHE_HOME to "
           "keep it)")
    say(profile_status.LINE_BUILT)
    return target
