"""The Jupyter kernels that execute a run's notebooks: the project's kernel spec, and warm
kernels started once per run (or per test module, or sweep), reset before each notebook.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from jupyter_client.manager import KernelManager

KERNEL = "qspace-frames"
KERNELS = max(1, min(os.cpu_count() or 1, 4))  # notebooks rendered side by side: one kernel a core

# jsonschema (imported by nbformat in a run's process, by altair in its kernels) loads rfc3987_syntax
# when it is installed, to check "iri" formats, and that compiles a grammar at import: 1.6-2.0 s
# per process. Nothing here validates IRIs, so a run's processes take the package as absent
# (jsonschema then skips that format).
WITHOUT_IRI_GRAMMAR = 'import sys\nsys.modules.setdefault("rfc3987_syntax", None)\n'
# Imported once when a run's kernel starts (while the library computes), and vl-convert's engine
# started with one tiny chart.
PRELOAD = (
    WITHOUT_IRI_GRAMMAR
    + """import polars, altair, qspace_frames.report.notebook, qspace_frames.report.charts, qspace_frames.report.exports
qspace_frames.report.notebook.warm_up()
"""
)
# Run before each notebook in a shared kernel: what a fresh kernel would have (an empty namespace,
# Polars' default display settings, cell numbers from 1 in a new history session), so a notebook's
# outputs do not depend on the notebooks run before it in the same kernel.
RESET = """get_ipython().reset(new_session=True)
import polars as _pl
_pl.Config.restore_defaults()
del _pl
"""


class WarmKernel:
    """A kernel kept for a whole run (or several), started and importing ahead of its first
    notebook and reset before each: a notebook then costs its own cells, not a kernel start and
    the imports (~3.5 s) every time."""

    def __init__(self, kernel_name: str, cwd: Path):
        self.kernel_name, self.cwd, self.km = kernel_name, cwd, None
        self.preload: tuple | None = None  # (client, msg_id) of the imports, until their reply is read

    def start(self) -> None:
        """Start the kernel and have it import what every notebook imports, without waiting: the
        first notebook's reset waits behind it."""
        if self.km is None or not self.km.is_alive():
            self.close()
            self.km = TrackedKernel(kernel_name=self.kernel_name)
            self.km.start_kernel(cwd=str(self.cwd))
            self.preload = self._send(PRELOAD)

    def _send(self, code: str) -> tuple:
        c = self.km.client()
        c.start_channels()
        return c, c.execute(code, silent=True, store_history=False)

    @staticmethod
    def _reply(client, msg_id: str, what: str) -> None:
        """Wait for the shell reply to `msg_id` (only the shell channel is read: no wait for IOPub)."""
        while (reply := client.get_shell_msg(timeout=120))["parent_header"].get("msg_id") != msg_id:
            pass
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"kernel {what} failed: {reply['content'].get('evalue', '')}")

    def fresh(self) -> dict:
        """papermill's keyword arguments for the next notebook: the kernel, reset. The reset goes
        through a new client: a client's sockets are tied to the event loop that was current when
        it was made, and nbclient runs each notebook in a loop of its own."""
        self.start()
        if self.preload is not None:  # its client must live until the imports ran: stopped early, it drops them unsent
            self._reply(*self.preload, "imports")
            self.preload = None
        self.km.drop_clients()  # the previous notebook's: nbclient leaves a client it did not start the kernel for running
        self._reply(*self._send(RESET), "reset")
        return {"km": self.km}

    def close(self) -> None:
        self.preload = None
        if self.km is not None:
            self.km.drop_clients()
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
        self.km = None


class TrackedKernel(KernelManager):
    """A kernel manager that remembers the clients it made, so the run can stop them (each runs a
    heartbeat thread)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.clients: list = []

    def client(self, **kwargs):
        c = super().client(**kwargs)
        self.clients.append(c)
        return c

    def drop_clients(self) -> None:
        for c in self.clients:
            c.stop_channels()
        self.clients = []


def without_iri_grammar() -> None:
    """WITHOUT_IRI_GRAMMAR in this process: call before nbformat is first imported."""
    sys.modules.setdefault("rfc3987_syntax", None)


def kernel_name() -> str:
    """The project's kernel when registered; otherwise the running interpreter's default."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL if KERNEL in KernelSpecManager().find_kernel_specs() else "python3"


def install_kernel() -> Path:
    """Register the project's Jupyter kernel inside the running environment (sys.prefix).

    Same as `ipykernel install --sys-prefix`, plus a log level that keeps the kernel's routine
    warnings (plain-TCP transport on localhost) out of every run's output.
    """
    import json as _json

    d = Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL
    d.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--IPKernelApp.log_level=ERROR"],
        "display_name": "qspace-frames",
        "language": "python",
        "metadata": {"debugger": True},
    }
    (d / "kernel.json").write_text(_json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return d
