import { describe, expect, it } from 'vitest';
import type { OpenAPI3 } from 'openapi-typescript';
import { apiTypesOf, checkedInFiles, servedOpenApiDocument, snapshotText } from '../scripts/openapi-snapshot.ts';

/**
 * The HTTP contract is reviewed as a diff: openapi/openapi.json is what the server serves, and the CLI's types are
 * generated from it. Either drifting fails here until `npm run openapi:snapshot` is run and its diff looked at
 * (docs/decisions.md, "OpenAPI snapshot and the typed CLI").
 */
const RUN_SNAPSHOT = 'run `npm run openapi:snapshot` and review the diff of openapi/openapi.json and src/cli/api-types.generated.ts';

/** Where two texts part, as "line N" and both lines: the files are megabytes, too big for a readable full diff. */
function firstDifference(checkedIn: string, current: string): string | undefined {
  if (checkedIn === current) return undefined;
  const before = checkedIn.split('\n');
  const after = current.split('\n');
  let line = 0;
  while (line < before.length && line < after.length && before[line] === after[line]) line += 1;
  return `first difference at line ${line + 1}: checked in ${JSON.stringify(before[line] ?? '(end of file)')}, now ${JSON.stringify(after[line] ?? '(end of file)')}`;
}

describe('the checked-in OpenAPI snapshot', () => {
  it('is the document GET /openapi.json serves', async () => {
    const [served, { snapshot }] = await Promise.all([servedOpenApiDocument(), checkedInFiles()]);
    // Parsed first, so a changed operation or schema fails with a structural diff naming it; then the text, whose key
    // order and formatting are part of the snapshot too.
    expect(served, `The API description changed: ${RUN_SNAPSHOT}`).toEqual(JSON.parse(snapshot) as OpenAPI3);
    expect(firstDifference(snapshot, snapshotText(served)), `openapi/openapi.json is not as the script writes it: ${RUN_SNAPSHOT}`).toBeUndefined();
  });

  it('generates the CLI types checked in as src/cli/api-types.generated.ts', async () => {
    const { snapshot, types } = await checkedInFiles();
    const generated = await apiTypesOf(JSON.parse(snapshot) as OpenAPI3);
    expect(
      firstDifference(types, generated),
      `src/cli/api-types.generated.ts is not what openapi-typescript makes of openapi/openapi.json: ${RUN_SNAPSHOT}`,
    ).toBeUndefined();
  });
});
