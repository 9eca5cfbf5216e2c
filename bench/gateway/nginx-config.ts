// The nginx configuration of the benchmark: a plain reverse proxy with pooled keep-alive upstream
// connections, everything it writes kept in one temporary directory.
import { join } from 'node:path';

export interface NginxConfigInput {
  /** The directory for the pid file and temp paths (nginx runs with -p on it). */
  dir: string;
  workerProcesses: number;
  loadPort: number;
  streamPort: number;
  loadUpstreamPort: number;
  streamUpstreamPort: number;
}

/** Idle upstream connections kept per worker. */
export const NGINX_UPSTREAM_KEEPALIVE = 64;

export function nginxConfig(input: NginxConfigInput): string {
  const path = (name: string) => join(input.dir, name);
  // Both sides keep connections for as long as the run lasts: nginx's default of 1000 requests
  // per connection would make it reconnect where the other targets do not.
  const upstream = (name: string, port: number) => `  upstream ${name} {
    server 127.0.0.1:${port};
    keepalive ${NGINX_UPSTREAM_KEEPALIVE};
    keepalive_requests 1000000;
  }`;
  const server = (port: number, upstreamName: string, extra: string[]) => `  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://${upstreamName};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
${extra.map((line) => `      ${line}\n`).join('')}    }
  }`;
  return `worker_processes ${input.workerProcesses};
daemon off;
pid ${path('nginx.pid')};
error_log stderr warn;

events {
  worker_connections 4096;
}

http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path ${path('client_body')};
  proxy_temp_path ${path('proxy')};
  fastcgi_temp_path ${path('fastcgi')};
  uwsgi_temp_path ${path('uwsgi')};
  scgi_temp_path ${path('scgi')};

${upstream('mock', input.loadUpstreamPort)}
${upstream('mock_stream', input.streamUpstreamPort)}

${server(input.loadPort, 'mock', [])}
${server(input.streamPort, 'mock_stream', ['proxy_buffering off;'])}
}
`;
}
