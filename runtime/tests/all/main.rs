mod formats;
