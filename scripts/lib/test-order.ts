/**
 * The order in which vitest starts the test files: the slowest first, named
 * here, then the others as vitest orders them (by its cache of the last run's
 * durations, or by size on a clean clone, where it has none). With two files
 * at a time the run is as long as its busier worker, so a slow file that
 * starts last makes the other worker idle while it ends; started first, it
 * runs beside the many short ones. A clean clone (CI) has no cache, and
 * vitest's fallback, larger files first, would start the audits' four-line
 * files last. Where each file's time goes: docs/testing.md#where-the-time-goes.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** A sequencer that starts `slowest` (paths from the repository root, slowest first) before every other file. */
export function slowestFirst(slowest: string[]): new (...args: ConstructorParameters<typeof BaseSequencer>) => BaseSequencer {
  const rank = (spec: TestSpecification) => {
    const i = slowest.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
    return i < 0 ? slowest.length : i;
  };
  return class SlowestFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      return sorted
        .map((spec, i) => ({ spec, i, rank: rank(spec) }))
        .sort((a, b) => a.rank - b.rank || a.i - b.i)
        .map((x) => x.spec);
    }
  };
}
