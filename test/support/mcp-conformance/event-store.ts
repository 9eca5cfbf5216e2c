// A bounded in-memory event store for the fixture's Streamable HTTP transport: it makes the SDK
// send priming events and lets a client resume a closed SSE stream with Last-Event-ID.
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const EVENTS_PER_STREAM = 256;
const STREAMS = 1024;

interface StoredEvent {
  id: EventId;
  message: JSONRPCMessage;
}

/** Event ids are `<stream id>/<sequence>`, so the stream of an id is read off the id itself. */
export class BoundedEventStore implements EventStore {
  // Insertion order is age order: the first stream is the one dropped past the bound.
  private readonly streams = new Map<StreamId, StoredEvent[]>();
  private sequence = 0;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    let events = this.streams.get(streamId);
    if (!events) {
      events = [];
      this.streams.set(streamId, events);
      if (this.streams.size > STREAMS) this.streams.delete(this.streams.keys().next().value as StreamId);
    }
    const id = `${streamId}/${++this.sequence}`;
    events.push({ id, message });
    if (events.length > EVENTS_PER_STREAM) events.shift();
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const streamId = eventId.slice(0, eventId.lastIndexOf('/'));
    return this.streams.has(streamId) ? streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const streamId = (await this.getStreamIdForEventId(lastEventId)) ?? '';
    const events = this.streams.get(streamId) ?? [];
    const last = events.findIndex((event) => event.id === lastEventId);
    // An id no longer held (dropped past the bound) replays nothing rather than a guess.
    if (last < 0) return streamId;
    // Priming events are stored as empty objects: they carry no message to replay.
    for (const event of events.slice(last + 1)) {
      if (Object.keys(event.message).length > 0) await send(event.id, event.message);
    }
    return streamId;
  }
}
