//! The loadable device image: tile images, programs and exchange schedules (serde types).
