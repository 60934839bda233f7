import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/** Users, organizations with their roles, members and onboarding records, API tokens and projects. */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('issuer', 'text')
    .addColumn('subject', 'text')
    .addColumn('email', 'text')
    .addColumn('name', 'text')
    .addColumn('picture', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('users_issuer_subject_key', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('users_email_idx').on('users').column('email').execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('website_url', 'text')
    .addColumn('repository', 'text')
    .addColumn('logo_url', 'text')
    .addColumn('icon_url', 'text')
    .addColumn('admin_emails', types.json)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('roles')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('roles_organization_name_key', ['organization_id', 'name'])
    .execute();

  await db.schema
    .createTable('members')
    .addColumn('organization_id', 'varchar(36)', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull().references('roles.id'))
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('members_pkey', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('members_user_idx').on('members').column('user_id').execute();

  await db.schema
    .createTable('onboarding')
    .addColumn('organization_id', 'varchar(36)', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('use_cases', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('onboarding_pkey', ['organization_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('token_start', 'text', (c) => c.notNull())
    .addColumn('role_id', 'varchar(36)', (c) => c.references('roles.id').onDelete('cascade'))
    .addColumn('scope', 'text')
    .addColumn('creator_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('creator_name', 'text')
    .addColumn('expires_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('api_tokens_organization_name_key', ['organization_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('projects_organization_name_key', ['organization_id', 'name_key'])
    .execute();
}
