// The websocket to /ws: decoded server messages out, reconnecting with backoff when it drops.

import { type ServerMessage, decodeServer } from '../protocol';

export type ConnectionState = 'connecting' | 'open' | 'closed';

export interface SocketHandlers {
  message(message: ServerMessage): void;
  state(state: ConnectionState): void;
}

export function socketUrl(location: Location): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = new URLSearchParams(location.search).get('token');
  return `${scheme}//${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}

/** Connects and keeps connecting until `close()`; returns that close function. */
export function openSocket(url: string, handlers: SocketHandlers): () => void {
  let socket: WebSocket | null = null;
  let closed = false;
  let delay = 250;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = (): void => {
    handlers.state('connecting');
    socket = new WebSocket(url);
    socket.onopen = () => {
      delay = 250;
      handlers.state('open');
    };
    socket.onmessage = (event: MessageEvent<unknown>) => {
      if (typeof event.data !== 'string') return;
      try {
        handlers.message(decodeServer(event.data));
      } catch (error) {
        console.warn('graphbook: ignoring a message', error);
      }
    };
    socket.onclose = () => {
      socket = null;
      if (closed) return;
      handlers.state('closed');
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 4000);
    };
  };
  connect();
  return () => {
    closed = true;
    clearTimeout(timer);
    socket?.close();
  };
}
