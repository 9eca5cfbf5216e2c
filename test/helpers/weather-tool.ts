// The function tool the provider tests offer in Chat Completions requests: get_weather of a city.
// The stand-ins answer a prompt about the weather with a call of it.

export const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
