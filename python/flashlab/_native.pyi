from typing import List, Optional, Tuple

__version__: str

def run_json(
    job: str,
    device: Optional[str] = None,
    overrides: List[Tuple[str, str]] = ...,
    seed: int = 1,
    job_name: str = "<job>",
) -> str: ...
def devices() -> List[Tuple[str, str, str]]: ...
def sweep_points(plan: str) -> List[List[Tuple[str, str]]]: ...
def sweep_run_point(plan: str, index: int, state_cache: Optional[str] = None) -> str: ...
def sweep_table_csv(docs: List[str]) -> str: ...
def suite_run(
    name: str,
    devices: List[str] = ...,
    overrides: List[Tuple[str, str]] = ...,
    options: List[Tuple[str, str]] = ...,
    state_cache: Optional[str] = None,
) -> Tuple[str, str]: ...
def suite_options(
    name: str,
) -> List[Tuple[str, Optional[str], Optional[str], str, str]]: ...
