// htm bound to Preact: html`<p>${text}</p>` builds Preact elements, no build step.
import htm from 'htm';
import { h } from 'preact';

export const html = htm.bind(h);
