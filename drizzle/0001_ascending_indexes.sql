DROP INDEX "activity_logs_created_idx";--> statement-breakpoint
DROP INDEX "activity_logs_user_idx";--> statement-breakpoint
DROP INDEX "activity_logs_module_idx";--> statement-breakpoint
DROP INDEX "activity_logs_action_idx";--> statement-breakpoint
DROP INDEX "users_created_idx";--> statement-breakpoint
DROP INDEX "users_department_idx";--> statement-breakpoint
DROP INDEX "articles_type_idx";--> statement-breakpoint
DROP INDEX "articles_created_idx";--> statement-breakpoint
DROP INDEX "articles_public_idx";--> statement-breakpoint
DROP INDEX "careers_department_idx";--> statement-breakpoint
DROP INDEX "careers_employment_type_idx";--> statement-breakpoint
DROP INDEX "careers_created_idx";--> statement-breakpoint
DROP INDEX "careers_public_idx";--> statement-breakpoint
DROP INDEX "projects_status_idx";--> statement-breakpoint
DROP INDEX "projects_type_idx";--> statement-breakpoint
DROP INDEX "projects_created_idx";--> statement-breakpoint
DROP INDEX "projects_public_idx";--> statement-breakpoint
DROP INDEX "campaigns_created_idx";--> statement-breakpoint
DROP INDEX "campaigns_status_idx";--> statement-breakpoint
DROP INDEX "inquiries_created_idx";--> statement-breakpoint
DROP INDEX "inquiries_status_idx";--> statement-breakpoint
DROP INDEX "inventory_units_created_idx";--> statement-breakpoint
DROP INDEX "inventory_units_status_idx";--> statement-breakpoint
DROP INDEX "inventory_units_block_idx";--> statement-breakpoint
DROP INDEX "inventory_units_house_model_idx";--> statement-breakpoint
DROP INDEX "leads_created_idx";--> statement-breakpoint
DROP INDEX "leads_status_idx";--> statement-breakpoint
DROP INDEX "leads_source_idx";--> statement-breakpoint
DROP INDEX "leads_assigned_idx";--> statement-breakpoint
DROP INDEX "newsletter_subscriptions_subscribed_idx";--> statement-breakpoint
DROP INDEX "newsletter_subscriptions_status_idx";--> statement-breakpoint
DROP INDEX "reservations_created_idx";--> statement-breakpoint
DROP INDEX "reservations_status_idx";--> statement-breakpoint
DROP INDEX "reservations_payment_idx";--> statement-breakpoint
DROP INDEX "reservations_project_idx";--> statement-breakpoint
CREATE INDEX "activity_logs_created_idx" ON "activity_logs" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "activity_logs_user_idx" ON "activity_logs" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "activity_logs_module_idx" ON "activity_logs" USING btree ("module","created_at","id");--> statement-breakpoint
CREATE INDEX "activity_logs_action_idx" ON "activity_logs" USING btree ("action","created_at","id");--> statement-breakpoint
CREATE INDEX "users_created_idx" ON "users" USING btree ("created_at","id") WHERE "users"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "users_department_idx" ON "users" USING btree ("department_id","created_at");--> statement-breakpoint
CREATE INDEX "articles_type_idx" ON "articles" USING btree ("type","created_at","id");--> statement-breakpoint
CREATE INDEX "articles_created_idx" ON "articles" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "articles_public_idx" ON "articles" USING btree ("publish_date","id") WHERE "articles"."published";--> statement-breakpoint
CREATE INDEX "careers_department_idx" ON "careers" USING btree ("department","created_at","id");--> statement-breakpoint
CREATE INDEX "careers_employment_type_idx" ON "careers" USING btree ("employment_type","created_at","id");--> statement-breakpoint
CREATE INDEX "careers_created_idx" ON "careers" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "careers_public_idx" ON "careers" USING btree ("publish_date","id") WHERE "careers"."published";--> statement-breakpoint
CREATE INDEX "projects_status_idx" ON "projects" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "projects_type_idx" ON "projects" USING btree ("type","created_at","id");--> statement-breakpoint
CREATE INDEX "projects_created_idx" ON "projects" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "projects_public_idx" ON "projects" USING btree ("publish_date","id") WHERE "projects"."published";--> statement-breakpoint
CREATE INDEX "campaigns_created_idx" ON "campaigns" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_status_idx" ON "campaigns" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "inquiries_created_idx" ON "inquiries" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "inquiries_status_idx" ON "inquiries" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "inventory_units_created_idx" ON "inventory_units" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "inventory_units_status_idx" ON "inventory_units" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "inventory_units_block_idx" ON "inventory_units" USING btree ("block","created_at");--> statement-breakpoint
CREATE INDEX "inventory_units_house_model_idx" ON "inventory_units" USING btree ("house_model","created_at");--> statement-breakpoint
CREATE INDEX "leads_created_idx" ON "leads" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "leads_status_idx" ON "leads" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_source_idx" ON "leads" USING btree ("source","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_assigned_idx" ON "leads" USING btree ("assigned_to","created_at","id");--> statement-breakpoint
CREATE INDEX "newsletter_subscriptions_subscribed_idx" ON "newsletter_subscriptions" USING btree ("subscribed_at","id");--> statement-breakpoint
CREATE INDEX "newsletter_subscriptions_status_idx" ON "newsletter_subscriptions" USING btree ("status","subscribed_at","id");--> statement-breakpoint
CREATE INDEX "reservations_created_idx" ON "reservations" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "reservations_status_idx" ON "reservations" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "reservations_payment_idx" ON "reservations" USING btree ("payment_status","created_at","id");--> statement-breakpoint
CREATE INDEX "reservations_project_idx" ON "reservations" USING btree ("project_name","created_at");