// The UI's pages, in navigation order: a page is one module under pages/ (its default export
// renders it) and one line here. `path` is its URL under /ui/.
export const PAGES = [
  { path: 'overview', title: 'Overview', module: './pages/overview.js' },
  { path: 'traffic', title: 'Traffic', module: './pages/traffic.js' },
  { path: 'playground', title: 'Playground', module: './pages/playground.js' },
];
