// The UI's pages, in navigation order: a page is one module under pages/ (its default export
// renders it, given the URL's query and the session) and one line here. `path` is its URL under /ui/.
export const PAGES = [
  { path: 'overview', title: 'Overview', module: './pages/overview.js' },
  { path: 'routes', title: 'Routes & backends', module: './pages/routes.js' },
  { path: 'models', title: 'Models', module: './pages/models.js' },
  { path: 'policies', title: 'Policies', module: './pages/policies.js' },
  { path: 'objects', title: 'Objects', module: './pages/objects.js' },
];
