"""Real-browser tests: Debian's chromium, driven headless through its chromedriver (selenium).

CI (``.ci/run``) installs ``chromium`` and ``chromium-driver`` with apt when they are missing and it runs
as root. Mermaid comes from npm (``package.json`` and ``package-lock.json`` here, installed by ``npm ci`` into
the ignored ``.browser/`` folder on first use): a page under test loads nothing from the internet.
When the browser or npm is not there, these tests are skipped, and the run's summary says so in red
capitals, never silently. Screenshots of each page looked at are kept in ``.browser/screenshots/``.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
WORK = ROOT / ".browser"
SCREENSHOTS = WORK / "screenshots"
CHROMIUM = os.environ.get("BLOG_API_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("BLOG_API_CHROMEDRIVER", "/usr/bin/chromedriver")
# The switches that keep a test's browser to itself: no GPU, no sandbox (root in a container), nothing
# fetched in the background, a profile of its own.
CHROMIUM_SWITCHES = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1100,1400",
)
# How long a test waits for a page to settle at most: far above what it takes, never a speed check.
PATIENCE_S = 30.0

_not_run: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _not_run:
        return
    terminalreporter.section("BROWSER TESTS DID NOT RUN", sep="!", red=True, bold=True)
    for reason in sorted(set(_not_run)):
        terminalreporter.line(f"SKIPPED: {reason}", red=True, bold=True)


def skip_loudly(reason: str) -> None:
    _not_run.append(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def mermaid_dist() -> Path:
    """mermaid's ``dist/`` folder, from the pinned npm package (``npm ci`` into ``.browser/`` once)."""
    dist = WORK / "node_modules" / "mermaid" / "dist"
    lock = HERE / "package-lock.json"
    installed_lock = WORK / "package-lock.json"
    current = installed_lock.exists() and installed_lock.read_bytes() == lock.read_bytes()
    if not (current and (dist / "mermaid.min.js").exists()):
        npm = shutil.which("npm")
        if npm is None:
            skip_loudly("npm is not installed: the browser tests load mermaid from its npm package")
        WORK.mkdir(exist_ok=True)
        shutil.copy(HERE / "package.json", WORK / "package.json")
        shutil.copy(lock, installed_lock)
        result = subprocess.run(
            [str(npm), "ci", "--no-audit", "--no-fund", "--silent"],
            cwd=WORK,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if result.returncode != 0:
            installed_lock.unlink(missing_ok=True)
            skip_loudly(f"npm ci could not install mermaid: {result.stderr.strip()[-300:]}")
    return dist


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless chromium for the session, with a fresh profile."""
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        skip_loudly(
            f"no browser: {CHROMIUM} and {CHROMEDRIVER} are needed "
            "(.ci/run installs Debian's chromium and chromium-driver with apt as root; elsewhere: "
            "apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for switch in CHROMIUM_SWITCHES:
        options.add_argument(switch)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(PATIENCE_S)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The browser for one test, back in light mode; a screenshot of where it ended is kept."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    yield browser
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / f"{request.node.name}.png"))


def wait_for(driver: Any, condition: Callable[[Any], Any], message: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, PATIENCE_S, poll_frequency=0.05).until(condition, message)


def diagram_drawn(label: str) -> Callable[[Any], Any]:
    """A wait condition: mermaid has drawn the article's diagram, with ``label`` in it; its size."""

    def drawn(driver: Any) -> Any:
        return driver.execute_script(
            "const svg = document.querySelector('.blog-content .mermaid svg');"
            "if (!svg || !svg.textContent.includes(arguments[0])) return null;"
            "const box = svg.getBoundingClientRect(); return {width: box.width, height: box.height};",
            label,
        )

    return drawn


class RunningPreview:
    """``blog-api preview`` as an author starts it, in a process of its own."""

    def __init__(self, folder: Path, mermaid_file: Path) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from function.cli.main import main; main()",
                "preview",
                str(folder),
                "--port",
                "0",
                "--mermaid",
                str(mermaid_file),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self._wait_for_url()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def _wait_for_url(self) -> str:
        seen: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=PATIENCE_S)
            except queue.Empty:
                self.stop()
                raise AssertionError(f"the preview printed no URL: {seen}") from None
            seen.append(line)
            if line.startswith("preview: http://"):
                return line.split()[1].rstrip("/")

    def stop(self) -> None:
        # Ctrl+C, as an author stops it: the preview then removes its temporary folder.
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
