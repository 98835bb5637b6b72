export { ResourceEdit as default } from './Form';
