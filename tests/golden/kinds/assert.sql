ASSERT (SELECT count(*) FROM houses) > 0 MESSAGE 'houses is empty';
