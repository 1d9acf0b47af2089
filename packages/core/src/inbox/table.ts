/** ferry's inbox table name. */
export { TABLE as INBOX_TABLE } from './sql/fragments';
