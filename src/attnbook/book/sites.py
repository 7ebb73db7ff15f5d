"""Where a profile's results were computed (the ledger's devices) and what a profile not run
would cost (the ``cost`` entries of the chapters' ``.yml``): the words the generated pages and
each chapter's profile note use, never typed in prose."""

import re
from collections import Counter

__all__ = ["device_sites", "sites_text", "cost_text", "not_run_text", "counted", "minutes_text"]


def counted(n: int | float, what: str) -> str:
    """``n`` and what it counts.

    >>> counted(1, "claim"), counted(3, "claim"), counted(2, "chapter")
    ('1 claim', '3 claims', '2 chapters')
    >>> counted(1.0, "hour"), counted(4.6, "hour"), counted(0.5, "minute")
    ('1 hour', '4.6 hours', '0.5 minutes')
    """
    return f"{f'{n:g}' if isinstance(n, float) else n} {what}{'' if n == 1 else 's'}"


def device_sites(device) -> list[str]:
    """The machines a recorded device string names, each once, in order.

    >>> device_sites("cpu: AMD EPYC (2 cores, 1 threads); cpu: AMD EPYC (2 cores, 2 threads)")
    ['CPU (AMD EPYC, 2 cores)']
    >>> device_sites("cuda: NVIDIA H200; cpu: Intel(R) Xeon(R) Processor (2 cores, 2 threads)")
    ['GPU (NVIDIA H200)', 'CPU (Intel Xeon Processor, 2 cores)']
    >>> device_sites("")
    []
    """
    out = []
    for d in (x.strip() for x in str(device or "").split(";") if x.strip()):
        if d.startswith("cpu"):
            name = d.removeprefix("cpu").lstrip(": ").replace("(R)", "").replace("(TM)", "")
            m = re.fullmatch(r"(.*?)\s*\((\d+) cores?(?:,[^)]*)?\)", name)
            name = f"{m.group(1)}, {m.group(2)} cores" if m else name
            site = f"CPU ({' '.join(name.split())})" if name else "CPU"
        elif d.startswith("cuda") or d.startswith("gpu"):
            name = re.sub(r"^(cuda|gpu)(:\d+)?:?", "", d).strip()
            site = f"GPU ({name})" if name else "GPU"
        else:
            site = d
        if site not in out:
            out.append(site)
    return out


def sites_text(devices) -> str:
    """Each machine with the number of claims it computed; ``devices``: one recorded device
    string per claim (an empty one is left out).

    >>> sites_text(["cpu: AMD EPYC (2 cores, 1 threads)"] * 2 + ["cuda: NVIDIA H200"])
    'CPU (AMD EPYC, 2 cores) for 2 of the 3 claims, GPU (NVIDIA H200) for 1 of the 3 claims'
    >>> sites_text(["cpu: AMD EPYC (2 cores, 1 threads)"] * 2)
    'CPU (AMD EPYC, 2 cores)'

    A claim computed on several machines counts once for each, so where every claim was:

    >>> sites_text(["cpu: AMD EPYC (2 cores, 1 threads); cpu: Intel Xeon (2 cores, 1 threads)"])
    'CPU (AMD EPYC, 2 cores) and CPU (Intel Xeon, 2 cores), each for every claim'
    >>> sites_text(["", ""])
    ''
    """
    claims = [sites for sites in map(device_sites, devices) if sites]
    n = Counter(site for sites in claims for site in sites)
    if not n:
        return ""
    if len(n) == 1:
        return next(iter(n))
    if all(k == len(claims) for k in n.values()):
        return f"{' and '.join(n)}, each for every claim"
    return ", ".join(f"{site} for {k} of the {counted(len(claims), 'claim')}"
                     for site, k in n.items())


def minutes_text(minutes: float) -> str:
    """Minutes in words: ``85 minutes``, ``2 hours``, ``4.6 hours``."""
    if minutes < 90:
        return counted(float(f"{minutes:.2g}"), "minute") if minutes < 10 \
            else f"{round(minutes)} minutes"
    return counted(round(minutes / 60, 1), "hour")


def cost_text(cost: dict | None) -> str:
    """A profile's ``cost`` entry (its ``.yml``) in words: how long, where, and whether that
    was measured or estimated; '' when the ``.yml`` gives none.

    >>> cost_text({"where": "gpu", "minutes": 120, "measured": False})
    'about 2 hours on one GPU (estimated)'
    >>> cost_text({"where": "cpu", "minutes": 278, "measured": True})
    'about 4.6 hours on the CPU (measured)'
    >>> cost_text({"where": "gpu"}), cost_text(None)
    ('on one GPU (no time given)', '')
    """
    if not cost:
        return ""
    where = {"gpu": "on one GPU", "cpu": "on the CPU"}.get(str(cost.get("where")),
                                                         f"on {cost.get('where')}")
    minutes = cost.get("minutes")
    if not isinstance(minutes, (int, float)) or isinstance(minutes, bool):
        return f"{where} (no time given)"
    return (f"about {minutes_text(float(minutes))} {where} "
            f"({'measured' if cost.get('measured') else 'estimated'})")


def not_run_text(cost: dict | None) -> str:
    """Why a profile has no results, from its ``cost`` entry: what it would take, and, for a
    profile sized for a GPU, that no GPU has run it.

    >>> not_run_text({"where": "gpu", "minutes": 60, "measured": False})
    'not run: about 60 minutes on one GPU (estimated), no GPU used'
    >>> not_run_text({"where": "cpu", "minutes": 245})
    'not run: about 4.1 hours on the CPU (estimated)'
    >>> not_run_text(None)
    'not run: its .yml gives no cost'
    """
    text = cost_text(cost)
    if not text:
        return "not run: its .yml gives no cost"
    if str((cost or {}).get("where", "")) == "gpu":
        text += ", no GPU used"
    return f"not run: {text}"

