"""Generate the command line reference (``cli.md``) from ``coflowopt``'s argparse parser.

Run by mkdocs-gen-files at build time (see ``mkdocs.yml``): it imports :mod:`coflowopt.cli`,
walks the parser and every level of subparsers, and writes each command's usage and help as
argparse formats them, so the page never drifts from the code.
"""

from __future__ import annotations

import argparse
import os

import mkdocs_gen_files

from coflowopt.cli import build_parser


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each direct subcommand of ``parser``, in order."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias of a command already listed
                    continue
                seen.add(id(sub))
                out.append((name, helps.get(name, ""), sub))
    return out


def _write(fd, parser: argparse.ArgumentParser, path: list[str], level: int) -> None:
    subs = _subcommands(parser)
    for name, summary, sub in subs:
        full = " ".join([*path, name])
        fd.write(f"{'#' * level} `{full}`\n\n")
        if summary:
            fd.write(f"{summary[0].upper()}{summary[1:]}.\n\n")
        fd.write("```text\n" + sub.format_help().rstrip() + "\n```\n\n")
        _write(fd, sub, [*path, name], min(level + 1, 6))


def main() -> None:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width: fix it for a stable page
    parser = build_parser()
    with mkdocs_gen_files.open("cli.md", "w") as fd:
        fd.write("# Command line reference\n\n")
        fd.write("Generated at build time from the argparse parser of `coflowopt.cli` "
                 "(`docs/gen_cli.py`): every command's usage and help exactly as "
                 "`coflowopt COMMAND --help` prints them.\n\n")
        fd.write("| command | what |\n|---|---|\n")
        for name, summary, _ in _subcommands(parser):
            fd.write(f"| [`coflowopt {name}`](#coflowopt-{name}) | {summary} |\n")
        fd.write("\n## `coflowopt`\n\n```text\n" + parser.format_help().rstrip() + "\n```\n\n")
        _write(fd, parser, ["coflowopt"], 2)
    mkdocs_gen_files.set_edit_path("cli.md", "gen_cli.py")


main()
