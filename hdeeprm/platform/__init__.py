"""Platform pipeline: cluster description (JSON) to resource hierarchy and platform.xml."""
