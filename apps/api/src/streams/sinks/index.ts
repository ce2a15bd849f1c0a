export * from './sink';
export { openSink } from './open-sink';
export { destinationUrlProblem, formatsOf, MAX_DESTINATION_URL_LENGTH } from './destination-url';
