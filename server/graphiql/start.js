// Starts GraphiQL in #graphiql (see page.html). The page's URL is the
// editor's state: GraphiQL opens with the query, variables, headers and
// operation name found in it, and every edit is written back with
// history.replaceState, so a URL can be bookmarked or shared.
(function () {
  'use strict';

  var root = document.getElementById('graphiql');
  var endpoint = new URL(root.dataset.endpoint, location.href).href;
  // Subscriptions run over a WebSocket to the same endpoint (GraphiQL's
  // bundled graphql-ws client, graphql-transport-ws); the headers editor's
  // headers (Authorization, or X-Viewer-Id with dev auth) go in its
  // connection_init payload, since a browser cannot set a WebSocket's.
  var ws = new URL(endpoint);
  ws.protocol = ws.protocol === 'https:' ? 'wss:' : 'ws:';
  var prefix = root.dataset.storagePrefix || '';

  // GraphiQL keeps tabs, history and (with shouldPersistHeaders) headers in
  // its storage; a prefix keeps them apart from other tools on the origin.
  function prefixedKeys() {
    var keys = [];
    for (var i = 0; i < localStorage.length; i++) {
      var k = localStorage.key(i);
      if (k !== null && k.indexOf(prefix) === 0) keys.push(k.slice(prefix.length));
    }
    return keys;
  }
  var storage = {
    getItem: function (k) { return localStorage.getItem(prefix + k); },
    setItem: function (k, v) { localStorage.setItem(prefix + k, v); },
    removeItem: function (k) { localStorage.removeItem(prefix + k); },
    clear: function () { prefixedKeys().forEach(function (k) { localStorage.removeItem(prefix + k); }); },
    key: function (i) { var keys = prefixedKeys(); return i >= 0 && i < keys.length ? keys[i] : null; },
    get length() { return prefixedKeys().length; },
  };

  var params = Object.fromEntries(new URLSearchParams(location.search));
  function keep(name) {
    return function (value) {
      params[name] = value;
      var search = new URLSearchParams();
      Object.keys(params).forEach(function (k) { if (params[k]) search.set(k, params[k]); });
      history.replaceState(null, '', '?' + search.toString());
    };
  }

  var props = {
    fetcher: GraphiQL.createFetcher({ url: endpoint, subscriptionUrl: ws.href }),
    query: params.query,
    variables: params.variables,
    headers: params.headers,
    operationName: params.operationName,
    onEditQuery: keep('query'),
    onEditVariables: keep('variables'),
    onEditHeaders: keep('headers'),
    onEditOperationName: keep('operationName'),
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: true,
    storage: storage,
    inputValueDeprecation: true,
  };
  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, props));
})();
