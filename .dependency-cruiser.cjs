/**
 * The import arrows of DESIGN.md §3 and docs/architecture.md, checked in CI (`npm run lint:architecture`, part of
 * `npm run lint`). Type-only imports count like any other: a layer that needs another's types depends on it.
 */
module.exports = {
  forbidden: [
    {
      name: 'lib-imports-nothing-internal',
      comment: 'src/lib is the bottom layer: errors, ids, crypto, clock.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'protocol-imports-only-protocol',
      comment: 'The contracts between control plane, agent runtime and drivers import nothing of Slipway but each other.',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/protocol/' },
    },
    {
      name: 'engine-is-not-the-agent-or-the-control-plane',
      comment: 'A driver sees the agent runtime only through src/protocol/agent-driver.ts; it knows no module, route or wiring.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/(agent|modules|http|cli|app\\.ts|main\\.ts)' },
    },
    {
      name: 'agent-is-not-the-control-plane',
      comment: 'The agent talks to the control plane over the protocol only.',
      severity: 'error',
      from: { path: '^src/agent/' },
      to: { path: '^src/(modules|http|cli|app\\.ts|main\\.ts)' },
    },
    {
      name: 'control-plane-does-not-reach-into-drivers',
      comment: "Modules and HTTP plumbing do not import a driver's internals (placement belongs to the driver).",
      severity: 'error',
      from: { path: '^src/(modules|http)/' },
      to: { path: '^src/(engine/local|agent)/' },
    },
    {
      name: 'plumbing-below-modules',
      comment: 'auth, policy, jobs and db serve the modules and never import them (nor HTTP).',
      severity: 'error',
      from: { path: '^src/(auth|policy|jobs|db)/' },
      to: { path: '^src/(modules|http|agent|engine|cli|app\\.ts)' },
    },
    {
      name: 'only-entry-points-import-the-composition-root',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main\\.ts|cli/)' },
      to: { path: '^src/app\\.ts$' },
    },
    {
      name: 'no-runtime-cycles',
      comment: 'Type-only cycles are erased at run time and allowed; a cycle of values is not.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/cli/api-types\\.generated\\.ts$' },
  },
};
